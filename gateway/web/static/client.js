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
  constructor(error) {
    super(error.rawMessage || error.codeName);
    this.code = error.codeName; // "not_found", "failed_precondition", ...
    this.reason = error.reason; // "NOT_YOUR_TURN", ...
    this.metadata = error.infoMetadata;
    this.retryable = error.retryable;
    this.retryAfter = (error.retryDelayMs || 0) / 1000;
  }
}

const apiError = (error) => new ApiError(ShikokuError.from(error));
const credential = (token) => (token ? { authorization: `Bearer ${token}` } : undefined);

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
    try {
      const response = await call(fromJson(method.input, request || {}), {
        headers: credential(token),
        signal,
        timeoutMs,
      });
      return toJson(method.output, response);
    } catch (error) {
      throw apiError(error);
    }
  }

  // A server stream: yields each response message as JSON; throws an ApiError when it fails
  // or breaks off.
  async *stream(path, request, { token = "", signal } = {}) {
    const [call, method] = this.method(path);
    try {
      const messages = call(fromJson(method.input, request || {}), { headers: credential(token), signal });
      for await (const message of messages) yield toJson(method.output, message);
    } catch (error) {
      throw apiError(error);
    }
  }
}
