// The questions the tests have the agent ask with the `question` tool: COLOR_QUESTION on 1.x (its
// recordings hold this text), COLOUR_QUESTION on 2.x. The question the 2.x tests have the agent ask with the `question` tool (on 2.x a form, `frm_…`):
// one choice of two labelled options.
export const COLOUR_QUESTION = {
  question: "Which colour?",
  header: "Colour",
  options: [
    { label: "red", description: "warm" },
    { label: "blue", description: "cold" },
  ],
};

/** The 1.x tests' question (the recordings of test/fixtures/1.18.33 were made with this text). */
export const COLOR_QUESTION = {
  question: "Which color?",
  header: "Color",
  options: [
    { label: "Red", description: "warm" },
    { label: "Blue", description: "cool" },
  ],
};
