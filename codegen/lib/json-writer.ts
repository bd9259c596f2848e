// Writes a JSON value as a TypeScript expression through ts-morph's writer, one property a line
// with the writer's indentation, so the generated file is stable and readable without a formatter.
import type { CodeBlockWriter } from "ts-morph";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INLINE_LIMIT = 80;

export function writeJson(writer: CodeBlockWriter, value: unknown): void {
  if (value === null || typeof value !== "object") {
    writer.write(JSON.stringify(value) ?? "undefined");
    return;
  }
  if (Array.isArray(value)) {
    writeArray(writer, value);
    return;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) {
    writer.write("{}");
    return;
  }
  writer.write("{").newLine();
  writer.indent(() => {
    for (const [key, item] of entries) {
      writer.write(`${propertyName(key)}: `);
      writeJson(writer, item);
      writer.write(",").newLine();
    }
  });
  writer.write("}");
}

function writeArray(writer: CodeBlockWriter, items: unknown[]): void {
  // Short lists of scalars (tags, enums, required) read better on one line.
  if (items.every((i) => i === null || typeof i !== "object")) {
    const inline = `[${items.map((i) => JSON.stringify(i)).join(", ")}]`;
    if (inline.length <= INLINE_LIMIT) {
      writer.write(inline);
      return;
    }
  }
  writer.write("[").newLine();
  writer.indent(() => {
    for (const item of items) {
      writeJson(writer, item);
      writer.write(",").newLine();
    }
  });
  writer.write("]");
}

function propertyName(key: string): string {
  // `__proto__: x` in an object literal sets the prototype instead of a property.
  if (key === "__proto__") return `["__proto__"]`;
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}
