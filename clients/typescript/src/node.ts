// createShikokuClient over Node's own http module (@connectrpc/connect-node) rather than fetch.
import { createConnectTransport } from "@connectrpc/connect-node";
import { credentials, shikokuClients, type Credentials, type ShikokuClient } from "./client.js";

export * from "./index.js";

export interface NodeClientOptions extends Credentials {
  binaryFormat?: boolean;
  /** "1.1" (the default: the web entrypoint serves HTTP/1.1) or "2". */
  httpVersion?: "1.1" | "2";
}

export function createShikokuNodeClient(baseUrl: string, options: NodeClientOptions): ShikokuClient {
  return shikokuClients(
    createConnectTransport({
      baseUrl,
      httpVersion: options.httpVersion ?? "1.1",
      useBinaryFormat: options.binaryFormat ?? false,
      interceptors: [credentials(options)],
    }),
  );
}
