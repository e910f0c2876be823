// The game's streams resumed by themselves: a broken or ended stream is opened again from the
// last version received + 1, so every event comes once, in order (docs/api.md, "Streaming").
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ShikokuError } from "./errors.js";
import type {
  GameEvent,
  StreamEventsRequestSchema,
  WatchGameRequestSchema,
  WatchGameResponse,
} from "./gen/shikoku/v1/game_pb.js";
import type { ShikokuClient } from "./client.js";

export interface ResumeOptions {
  /** Ends the stream (the iteration then throws a canceled ShikokuError). */
  signal?: AbortSignal;
  /** Headers of every connection, e.g. `bearer(token).headers`. */
  headers?: Record<string, string>;
  /** Connections in a row that may fail (or end) before the stream gives up; default 10. */
  attempts?: number;
  /** The pause before connection number `failures` + 1 after that many in a row failed. */
  pauseMs?: (failures: number, error: ShikokuError | undefined) => number;
}

type CallOptions = { signal?: AbortSignal; headers?: Record<string, string> };

const DEFAULT_ATTEMPTS = 10;

function defaultPause(failures: number, error: ShikokuError | undefined): number {
  return Math.max(error?.retryDelayMs ?? 0, Math.min(200 * 2 ** failures, 5000));
}

/** WatchGame, resumed: yields each event once and the heartbeats. */
export function watchGame(
  game: ShikokuClient["game"],
  request: MessageInitShape<typeof WatchGameRequestSchema>,
  options: ResumeOptions = {},
): AsyncGenerator<WatchGameResponse, void, undefined> {
  return resuming(
    (fromVersion, call) => game.watchGame({ ...request, fromVersion }, call),
    (item) => (item.item.case === "event" ? item.item.value.version : undefined),
    BigInt(request.fromVersion ?? 0),
    options,
  );
}

/** StreamEvents, resumed: yields each event once. */
export function streamEvents(
  game: ShikokuClient["game"],
  request: MessageInitShape<typeof StreamEventsRequestSchema>,
  options: ResumeOptions = {},
): AsyncGenerator<GameEvent, void, undefined> {
  return resuming(
    (fromVersion, call) => game.streamEvents({ ...request, fromVersion }, call),
    (event) => event.version,
    BigInt(request.fromVersion ?? 0),
    options,
  );
}

async function* resuming<T>(
  open: (fromVersion: bigint, call: CallOptions) => AsyncIterable<T>,
  versionOf: (item: T) => bigint | undefined,
  fromVersion: bigint,
  { signal, headers, attempts = DEFAULT_ATTEMPTS, pauseMs = defaultPause }: ResumeOptions,
): AsyncGenerator<T, void, undefined> {
  let next = fromVersion;
  let failures = 0;
  for (;;) {
    let failure: ShikokuError | undefined;
    try {
      for await (const item of open(next, { signal, headers })) {
        // Messages already read stay unyielded once the caller has stopped the stream.
        if (signal?.aborted) throw stopped();
        failures = 0;
        const version = versionOf(item);
        if (version !== undefined && version >= next) next = version + 1n;
        yield item;
      }
      // The server ended the stream (a restart, a drain): open it again, as after a break.
    } catch (error) {
      failure = ShikokuError.from(error);
      if (signal?.aborted || !failure.retryable) throw failure;
    }
    failures += 1;
    if (failures >= attempts) {
      if (failure) throw failure;
      return;
    }
    await sleep(pauseMs(failures, failure), signal);
  }
}

function stopped(): ShikokuError {
  return ShikokuError.from(new ConnectError("the stream was stopped", Code.Canceled));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(stopped());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    if (signal?.aborted) aborted();
    else signal?.addEventListener("abort", aborted, { once: true });
  });
}
