// createShikokuClient: the four public services over one Connect transport, each call carrying
// the application's API key (and a default credential), each failure a ShikokuError.
import type { DescService } from "@bufbuild/protobuf";
import {
  createClient,
  type CallOptions,
  type Client,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ShikokuError } from "./errors.js";
import { GameService } from "./gen/shikoku/v1/game_pb.js";
import { LobbyService } from "./gen/shikoku/v1/lobby_pb.js";
import { RoutesService } from "./gen/shikoku/v1/routes_pb.js";
import { TitleService } from "./gen/shikoku/v1/title_pb.js";

export interface Credentials {
  /** The application's API key, sent as `x-api-key` on every call. */
  apiKey: string;
  /** A seat token, host token or player credential sent as `authorization: Bearer` on every
   * call that does not set its own (see `bearer`). */
  token?: string;
}

export interface ShikokuClientOptions extends Credentials {
  /** Binary protobuf on the wire instead of JSON (the default, readable in a browser's tools). */
  binaryFormat?: boolean;
  /** The fetch the transport calls, by default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
}

export interface ShikokuClient {
  game: Client<typeof GameService>;
  lobby: Client<typeof LobbyService>;
  title: Client<typeof TitleService>;
  routes: Client<typeof RoutesService>;
}

/** Call options that send `token` as this call's credential: `lobby.setReady(req, bearer(t))`. */
export function bearer(token: string): { headers: Record<string, string> } {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The interceptor that sends the key and the default credential; for a transport of your own. */
export function credentials({ apiKey, token }: Credentials): Interceptor {
  return (next) => (request) => {
    request.header.set("x-api-key", apiKey);
    if (token && !request.header.has("authorization")) {
      request.header.set("authorization", `Bearer ${token}`);
    }
    return next(request);
  };
}

/** The clients over any transport (gRPC-Web, Node's http2...), errors as ShikokuError. */
export function shikokuClients(transport: Transport): ShikokuClient {
  return {
    game: decodingErrors(GameService, createClient(GameService, transport)),
    lobby: decodingErrors(LobbyService, createClient(LobbyService, transport)),
    title: decodingErrors(TitleService, createClient(TitleService, transport)),
    routes: decodingErrors(RoutesService, createClient(RoutesService, transport)),
  };
}

/** The public API at `baseUrl` (the web entrypoint, http://127.0.0.1:8080 under `make run`)
 * over the Connect protocol with fetch: browsers and Node 18 or later. */
export function createShikokuClient(baseUrl: string, options: ShikokuClientOptions): ShikokuClient {
  return shikokuClients(
    createConnectTransport({
      baseUrl,
      useBinaryFormat: options.binaryFormat ?? false,
      fetch: options.fetch,
      interceptors: [credentials(options)],
    }),
  );
}

// Each method of `client` rethrowing what it throws as a ShikokuError: a unary call when its
// promise rejects, a server stream when its iteration does. A stream's connection is also
// closed when its iteration ends early (a `break`), which Connect-ES's fetch transport leaves
// open until the server ends it.
function decodingErrors<S extends DescService>(service: S, client: Client<S>): Client<S> {
  const wrapped: Record<string, unknown> = {};
  const methods = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of service.methods) {
    const call = methods[method.localName];
    wrapped[method.localName] =
      method.methodKind === "server_streaming"
        ? (request: unknown, options: CallOptions = {}) => {
            const connection = new AbortController();
            const stop = () => connection.abort(options.signal?.reason);
            if (options.signal?.aborted) stop();
            else options.signal?.addEventListener("abort", stop, { once: true });
            const messages = call(request, { ...options, signal: connection.signal });
            return rethrowing(messages as AsyncIterable<unknown>, () => {
              options.signal?.removeEventListener("abort", stop);
              connection.abort();
            });
          }
        : async (...args: unknown[]) => {
            try {
              return await call(...args);
            } catch (error) {
              throw ShikokuError.from(error);
            }
          };
  }
  return wrapped as Client<S>;
}

async function* rethrowing<T>(
  messages: AsyncIterable<T>,
  close: () => void,
): AsyncGenerator<T, void, undefined> {
  try {
    yield* messages;
  } catch (error) {
    throw ShikokuError.from(error);
  } finally {
    close();
  }
}
