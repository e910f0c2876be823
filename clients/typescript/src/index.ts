// @shikoku/client: the Shikoku 1889 public API (shikoku.v1) for browsers and Node.
export {
  bearer,
  createShikokuClient,
  credentials,
  shikokuClients,
  type Credentials,
  type ShikokuClient,
  type ShikokuClientOptions,
} from "./client.js";
export { codeName, ShikokuError, type ErrorReason } from "./errors.js";
export { isReason, REASON_FAMILY, type Reason, type ReasonFamily } from "./reasons.js";
export { streamEvents, watchGame, type ResumeOptions } from "./streams.js";
export { Code } from "@connectrpc/connect";
export * from "./gen/shikoku/v1/game_pb.js";
export * from "./gen/shikoku/v1/lobby_pb.js";
export * from "./gen/shikoku/v1/routes_pb.js";
export * from "./gen/shikoku/v1/title_pb.js";
export {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
  type BadRequest,
  type ErrorInfo,
  type RetryInfo,
} from "./gen/google/rpc/error_details_pb.js";
// Making messages and converting them to and from their JSON form (docs/api.md).
export { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
