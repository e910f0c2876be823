// The package against a running system: SHIKOKU_WEB_URL (the web entrypoint) and
// SHIKOKU_API_KEY; tests/typescript/test_client.py starts `shikoku run` and runs this file
// with `node --test`. It imports the package by its own name, as a user would (dist/).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  bearer,
  Code,
  createShikokuClient,
  isReason,
  REASON_FAMILY,
  ShikokuError,
  watchGame,
} from "@shikoku/client";
import { createShikokuNodeClient } from "@shikoku/client/node";

const url = process.env.SHIKOKU_WEB_URL;
const apiKey = process.env.SHIKOKU_API_KEY;
assert.ok(url && apiKey, "SHIKOKU_WEB_URL and SHIKOKU_API_KEY must be set");

async function startedGame(client, seats = 2) {
  const { table, hostToken } = await client.lobby.createTable({ seatCount: seats });
  const tokens = [];
  for (let n = 1; n <= seats; n++) {
    const joined = await client.lobby.joinTable({ tableId: table.tableId, playerName: `p${n}` });
    tokens.push(joined.seatToken);
  }
  const started = await client.lobby.startTable({ tableId: table.tableId }, bearer(hostToken));
  return { gameId: started.gameId, tokens };
}

test("getTitle answers the title's data, over fetch and over Node's http", async () => {
  for (const client of [createShikokuClient(url, { apiKey }), createShikokuNodeClient(url, { apiKey })]) {
    const title = await client.title.getTitle({ title: "1889" });
    assert.equal(title.name, "1889");
    assert.equal(title.layout, "flat");
    assert.ok(title.hexes.length > 40, `${title.hexes.length} hexes`);
  }
});

test("binary protobuf on the wire reads the same title", async () => {
  const title = await createShikokuClient(url, { apiKey, binaryFormat: true }).title.getTitle({});
  assert.equal(title.name, "1889");
});

test("a refusal is a ShikokuError with its ErrorInfo decoded", async () => {
  const client = createShikokuClient(url, { apiKey: "k-nobody.wrong" });
  const error = await client.title.getTitle({ title: "1889" }).then(
    () => assert.fail("a wrong key was accepted"),
    (caught) => caught,
  );
  assert.ok(error instanceof ShikokuError);
  assert.equal(error.code, Code.Unauthenticated);
  assert.equal(error.codeName, "unauthenticated");
  assert.equal(error.reason, "INVALID_API_KEY");
  assert.equal(error.domain, "shikoku.1889");
  assert.ok(isReason(error.reason));
  assert.equal(REASON_FAMILY[error.reason], "ACCESS");
  assert.equal(error.retryable, false);
});

test("a refusal's metadata and an unknown title", async () => {
  const client = createShikokuClient(url, { apiKey });
  const error = await client.title.getTitle({ title: "1830" }).catch((caught) => caught);
  assert.ok(error instanceof ShikokuError, String(error));
  assert.equal(error.codeName, "not_found");
  assert.equal(error.reason, "UNKNOWN_TITLE");
});

test("a stream's refusal comes from its end message, decoded the same way", async () => {
  const client = createShikokuClient(url, { apiKey });
  const events = client.game.watchGame({ gameId: "no-such-game", fromVersion: 1n });
  const error = await (async () => {
    for await (const _ of events) assert.fail("an event of a game that does not exist");
  })().catch((caught) => caught);
  assert.ok(error instanceof ShikokuError, String(error));
  assert.equal(error.codeName, "not_found");
  assert.equal(error.reason, "GAME_NOT_FOUND");
});

test("the default token is every call's credential; a call's own wins", async () => {
  const client = createShikokuClient(url, { apiKey });
  const { table, hostToken } = await client.lobby.createTable({ seatCount: 2 });
  const asHost = createShikokuClient(url, { apiKey, token: hostToken });
  await client.lobby.joinTable({ tableId: table.tableId, playerName: "a" });
  await client.lobby.joinTable({ tableId: table.tableId, playerName: "b" });
  const wrong = await asHost.lobby
    .startTable({ tableId: table.tableId }, bearer("not-a-token"))
    .catch((caught) => caught);
  assert.ok(wrong instanceof ShikokuError, String(wrong));
  assert.equal(wrong.codeName, "unauthenticated");
  const started = await asHost.lobby.startTable({ tableId: table.tableId });
  assert.ok(started.gameId);
});

test("watchGame resumes from the last version after the connection breaks", async () => {
  let connections = 0;
  // The first WatchGame connection breaks after its first message: its body ends there,
  // without the end message, as a dropped connection's does.
  const breaking = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).endsWith("/WatchGame") || connections++ > 0) return response;
    const reader = response.body.getReader();
    let bytes = new Uint8Array(0);
    while (bytes.length < 5 || bytes.length < 5 + new DataView(bytes.buffer).getUint32(1)) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before its first message");
      bytes = Uint8Array.from([...bytes, ...value]);
    }
    await reader.cancel();
    const first = bytes.subarray(0, 5 + new DataView(bytes.buffer).getUint32(1));
    return new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(first);
          controller.close();
        },
      }),
      { status: response.status, headers: response.headers },
    );
  };
  const client = createShikokuClient(url, { apiKey, fetch: breaking });
  const { gameId, tokens } = await startedGame(client);
  const stored = await client.game.getState({ gameId }, bearer(tokens[0]));
  assert.ok(stored.version >= 2n, `a new game has ${stored.version} events`);
  const versions = [];
  for await (const item of watchGame(
    client.game,
    { gameId, fromVersion: 1n, heartbeatSeconds: 1 },
    { headers: bearer(tokens[0]).headers, pauseMs: () => 10 },
  )) {
    if (item.item.case === "event") versions.push(item.item.value.version);
    if (versions.length && versions.at(-1) >= stored.version) break;
  }
  assert.equal(connections, 2);
  assert.deepEqual(
    versions,
    Array.from({ length: Number(stored.version) }, (_, n) => BigInt(n + 1)),
  );
});

test("watchGame stops at once when its signal aborts", async () => {
  const client = createShikokuClient(url, { apiKey });
  const { gameId, tokens } = await startedGame(client);
  const controller = new AbortController();
  const seen = [];
  const error = await (async () => {
    for await (const item of watchGame(
      client.game,
      { gameId, fromVersion: 1n },
      { headers: bearer(tokens[0]).headers, signal: controller.signal },
    )) {
      seen.push(item);
      controller.abort();
    }
  })().catch((caught) => caught);
  assert.equal(seen.length, 1);
  assert.ok(error instanceof ShikokuError, String(error));
  assert.equal(error.code, Code.Canceled);
});
