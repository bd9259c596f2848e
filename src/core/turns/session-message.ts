// A v1 session message as opencode returns it: the message and its parts.
import type { Schemas } from "../../client/types.js";

export type SessionMessage = { info: Schemas["Message"]; parts: Schemas["Part"][] };
