// The server's refusals as one error type: a ConnectError with the google.rpc details the
// gateway attaches (ErrorInfo, RetryInfo, BadRequest) already decoded.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
} from "./gen/google/rpc/error_details_pb.js";
import type { Reason } from "./reasons.js";

/**
 * A google.rpc.ErrorInfo reason: one of the catalogue's (reasons.ts, made from the proto enum
 * shikoku.v1.Reason), any other string for a reason newer than this package, "" for none.
 * (`string & {}` keeps the catalogue's names offered by editors.)
 */
export type ErrorReason = Reason | "" | (string & {});

/** Codes worth another try: the same call may succeed later as it is. */
const RETRYABLE = new Set<Code>([
  Code.Unavailable,
  Code.DeadlineExceeded,
  Code.Aborted,
  Code.ResourceExhausted,
  Code.Unknown,
  Code.Canceled,
]);

// Connect-ES's words for a server stream that stopped without its end message: the
// connection broke (a restart, a network failure), which another try may get past.
const BROKEN_STREAM = "missing EndStreamResponse";

/** "failed_precondition" for Code.FailedPrecondition: the Connect protocol's spelling. */
export function codeName(code: Code): string {
  return (Code[code] ?? "Unknown").replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase();
}

export class ShikokuError extends ConnectError {
  /** The ErrorInfo's reason. */
  readonly reason: ErrorReason;
  /** The ErrorInfo's domain: "shikoku.1889" for the server's own refusals. */
  readonly domain: string;
  /** The ErrorInfo's metadata, what was wrong ({ seat: "2", acting: "1" }); `metadata` is
   * ConnectError's, the response's headers and trailers. */
  readonly infoMetadata: Readonly<Record<string, string>>;
  /** Milliseconds a RetryInfo (or a Retry-After header) asked to wait; undefined without one. */
  readonly retryDelayMs: number | undefined;
  /** The malformed request fields a BadRequest names: field path → description. */
  readonly fieldViolations: Readonly<Record<string, string>>;

  private constructor(error: ConnectError) {
    const broken = error.code === Code.Unknown && error.rawMessage === BROKEN_STREAM;
    super(
      broken ? "the stream ended without its end message" : error.rawMessage,
      broken ? Code.Unavailable : error.code,
      error.metadata,
      undefined,
      error.cause ?? error,
    );
    // Keep ConnectError's name: Connect-ES recognises its errors by it.
    (this as { details: ConnectError["details"] }).details = error.details;
    const [info] = error.findDetails(ErrorInfoSchema);
    const [retry] = error.findDetails(RetryInfoSchema);
    const [badRequest] = error.findDetails(BadRequestSchema);
    this.reason = info?.reason ?? "";
    this.domain = info?.domain ?? "";
    this.infoMetadata = { ...(info?.metadata ?? {}) };
    const delay = retry?.retryDelay;
    const retryAfter = Number(error.metadata.get("retry-after"));
    this.retryDelayMs = delay
      ? Number(delay.seconds) * 1000 + delay.nanos / 1e6
      : retryAfter > 0
        ? retryAfter * 1000
        : undefined;
    this.fieldViolations = Object.fromEntries(
      (badRequest?.fieldViolations ?? []).map((v) => [v.field, v.description]),
    );
  }

  /** Any caught value as a ShikokuError (a ShikokuError as it is). */
  static override from(reason: unknown): ShikokuError {
    if (isShikokuError(reason)) return reason;
    return new ShikokuError(ConnectError.from(reason));
  }

  // ConnectError's own check accepts anything shaped like a ConnectError; this one only
  // errors made by ShikokuError.from.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isShikokuError(value);
  }

  /** The code in the Connect protocol's spelling: "failed_precondition", "not_found", ... */
  get codeName(): string {
    return codeName(this.code);
  }

  /** Whether trying the same call again may succeed. */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

function isShikokuError(value: unknown): value is ShikokuError {
  return value instanceof Error && Object.prototype.isPrototypeOf.call(ShikokuError.prototype, value);
}
