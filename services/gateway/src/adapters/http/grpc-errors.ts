import { status } from "@grpc/grpc-js";
import { NotFoundError, UnavailableError, ValidationError } from "@steward/platform";

/** The one mapping of a policy-service answer to an HTTP error: its own words only for the admin's input. */
export function fromGrpc(err: unknown): Error {
  const code = (err as { code?: number }).code;
  const details = (err as { details?: string }).details ?? "";
  if (code === status.INVALID_ARGUMENT) return new ValidationError(details.slice(0, 2000) || "invalid request", { cause: err });
  if (code === status.NOT_FOUND) return new NotFoundError(details || "not found", { cause: err });
  if (code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED) {
    return new UnavailableError("the policy service is unavailable; try again", { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
