/**
 * The closed error taxonomy of SPEC §7. Each transport maps these once: HTTP to problem details, gRPC to a
 * status, JetStream to nak/term. Messages are written for clients and never carry secrets or upstream text.
 */
export class StewardError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StewardError";
  }
}

export class BadRequestError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(400, 10001, message, options);
    this.name = "BadRequestError";
  }
}

export class UnauthenticatedError extends StewardError {
  constructor(message = "missing or invalid credentials", options?: { cause?: unknown }) {
    super(401, 10011, message, options);
    this.name = "UnauthenticatedError";
  }
}

export class ForbiddenError extends StewardError {
  constructor(message = "the policy decision point denied this action", options?: { cause?: unknown }) {
    super(403, 10031, message, options);
    this.name = "ForbiddenError";
  }
}

export class NotFoundError extends StewardError {
  constructor(message = "run not found", options?: { cause?: unknown }) {
    super(404, 10050, message, options);
    this.name = "NotFoundError";
  }
}

export class ConflictError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(409, 10090, message, options);
    this.name = "ConflictError";
  }
}

export class ValidationError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(422, 10430, message, options);
    this.name = "ValidationError";
  }
}

export class RateLimitedError extends StewardError {
  /** Seconds until the limit lets the caller in again: the `Retry-After` of the answer. */
  readonly retryAfterSeconds: number;

  constructor(message = "rate limited", options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(429, 10429, message, options);
    this.name = "RateLimitedError";
    this.retryAfterSeconds = Math.max(1, Math.ceil(options?.retryAfterSeconds ?? 1));
  }
}

/** A dependency is away for now (PostgreSQL, the PDP): nothing was decided, the same request may be sent again. */
export class UnavailableError extends StewardError {
  constructor(message = "temporarily unavailable; try again", options?: { cause?: unknown }) {
    super(503, 10503, message, options);
    this.name = "UnavailableError";
  }
}

/** Raised when an append finds the stream at another version than expected; nothing was written. */
export class ConcurrencyError extends Error {
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
    options?: { cause?: unknown },
  ) {
    super(`stream ${streamId} is not at version ${expectedVersion}`, options);
    this.name = "ConcurrencyError";
  }
}
