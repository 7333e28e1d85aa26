import type { FastifyInstance } from "fastify";
import { RunSnapshotSchema } from "../run-responses";
import { ThreadSnapshotSchema } from "../thread-responses";
import { problemSchemas } from "./problems";

/** Schemas many routes answer with, added once by `$id` (components/schemas in the document) and referred to. */
export function registerSharedSchemas(app: FastifyInstance): void {
  for (const schema of [...problemSchemas(), RunSnapshotSchema, ThreadSnapshotSchema]) app.addSchema(schema);
}
