// Renders generated/openapi.d.ts exactly as `openapi-typescript SPEC --empty-objects-unknown`
// would: same header, same options (every other CLI flag left at its default).
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

export async function renderTypesFile(specFile: string): Promise<string> {
  // A file URL, like the CLI passes, so redocly resolves the document the same way.
  const ast = await openapiTS(pathToFileURL(resolve(specFile)), { emptyObjectsUnknown: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}
