// An edit that would lose or break something of the user's is refused with what to do instead.
export class EditRefused extends Error {
  override name = "EditRefused";
}
