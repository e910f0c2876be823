// The page's calls to the public API, through @shikoku/client (clients/typescript, bundled
// into shikoku-client.js by `make`): the package speaks Connect (envelopes, streams, the
// google.rpc.ErrorInfo of each refusal); this keeps the page's modules on the protobuf JSON
// form they read and send (docs/browser.md), converting at this edge, and gives the errors
// the shape the page shows (`code` in Connect's spelling, `reason`, `metadata`).
import {
  GameService,
  LobbyService,
  RoutesService,
  ShikokuError,
  TitleService,
  createShikokuClient,
  fromJson,
  toJson,
} from "./shikoku-client.js";

const SERVICES = {
  GameService: ["game", GameService],
  LobbyService: ["lobby", LobbyService],
  RoutesService: ["routes", RoutesService],
  TitleService: ["title", TitleService],
};

export class ApiError extends Error {
  constructor(code, message, { reason = "", metadata = {}, retryable = false, retryAfter = 0 } = {}) {
    super(message || code);
    this.code = code; // "not_found", "failed_precondition", ...
    this.reason = reason; // "NOT_YOUR_TURN", ...
    this.metadata = metadata;
    this.retryable = retryable;
    this.retryAfter = retryAfter;
  }

  static from(caught) {
    const error = ShikokuError.from(caught);
    return new ApiError(error.codeName, error.rawMessage, {
      reason: error.reason,
      metadata: error.infoMetadata,
      retryable: error.retryable,
      retryAfter: (error.retryDelayMs || 0) / 1000,
    });
  }
}

const credential = (token) => (token ? { authorization: `Bearer ${token}` } : undefined);

// A request that does not fit its message is refused here, as the server would refuse it.
function requestOf(method, request) {
  try {
    return fromJson(method.input, request || {});
  } catch (error) {
    throw new ApiError("invalid_argument", error.message, { reason: "INVALID_FIELD" });
  }
}

export class Api {
  constructor({ apiKey = "", baseUrl = location.origin } = {}) {
    this.clients = createShikokuClient(baseUrl, { apiKey });
  }

  // "GameService/GetState": the package's method and its descriptor.
  method(path) {
    const [service, name] = path.split("/");
    const [client, descriptor] = SERVICES[service];
    const method = descriptor.methods.find((m) => m.name === name);
    return [this.clients[client][method.localName], method];
  }

  // One unary call: resolves to the response message as JSON.
  async call(path, request, { token = "", signal, timeoutMs = 15000 } = {}) {
    const [call, method] = this.method(path);
    const message = requestOf(method, request);
    try {
      const response = await call(message, {
        headers: credential(token),
        signal,
        timeoutMs,
      });
      return toJson(method.output, response);
    } catch (error) {
      throw ApiError.from(error);
    }
  }

  // A server stream: yields each response message as JSON; throws an ApiError when it fails
  // or breaks off.
  async *stream(path, request, { token = "", signal } = {}) {
    const [call, method] = this.method(path);
    const message = requestOf(method, request);
    try {
      const messages = call(message, { headers: credential(token), signal });
      for await (const item of messages) yield toJson(method.output, item);
    } catch (error) {
      throw ApiError.from(error);
    }
  }
}
