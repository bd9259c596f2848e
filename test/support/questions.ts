// The question the 2.x tests have the agent ask with the `question` tool (on 2.x a form, `frm_…`):
// one choice of two labelled options.
export const COLOUR_QUESTION = {
  question: "Which colour?",
  header: "Colour",
  options: [
    { label: "red", description: "warm" },
    { label: "blue", description: "cold" },
  ],
};
