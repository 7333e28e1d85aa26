import { execFile } from "node:child_process";

/** What the OpenAPI schema validator says of a document: which specification version, and why not valid. */
export interface OpenApiVerdict {
  readonly valid: boolean;
  readonly version: string | undefined;
  readonly errors: unknown;
}

/*
 * @seriousme/openapi-schema-validator (2.x) checks a document against the official OpenAPI 3.0/3.1/3.2 JSON
 * schemas. It is published as ES modules only, which this jest setup (CommonJS) cannot load: it runs in a
 * child Node process, the document on stdin, its verdict on stdout.
 */
const SCRIPT = `
import { Validator } from "@seriousme/openapi-schema-validator";
let text = "";
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }));
`;

/** Validates an OpenAPI document (as an object) against the specification's own schema. Tests only. */
export function validateOpenApi(document: unknown): Promise<OpenApiVerdict> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["--input-type=module", "-e", SCRIPT],
      { cwd: __dirname, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`the OpenAPI validator failed: ${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as OpenApiVerdict);
      },
    );
    child.stdin!.end(JSON.stringify(document));
  });
}
