// The demo client: plain fetch against the bridge that served this page (docs/browser.md).
"use strict";

const API = "/shikoku.v1.";
const RETRYABLE_HTTP = new Set([0, 429, 499, 502, 503, 504]);
// gRPC codes worth retrying when they end a stream: CANCELLED, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE.
const RETRYABLE_CODES = new Set([1, 4, 8, 10, 14]);

const $ = (id) => document.getElementById(id);
let currentWatch = null; // the AbortController of the watch's open request

class ApiError extends Error {
  constructor(httpStatus, status, retryAfter) {
    super(status.message || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus; // 200 when the error ended a stream
    this.code = status.code || 0;
    const info = (status.details || []).find((d) => d["@type"].endsWith("/google.rpc.ErrorInfo"));
    this.reason = info ? info.reason : "";
    this.retryAfter = retryAfter;
  }

  get retryable() {
    return this.httpStatus === 200 ? RETRYABLE_CODES.has(this.code) : RETRYABLE_HTTP.has(this.httpStatus);
  }
}

function requestHeaders(token) {
  const headers = { "Content-Type": "application/json" };
  const apiKey = $("api-key").value.trim();
  if (apiKey) headers["x-api-key"] = apiKey;
  if (token) headers.authorization = `Bearer ${token}`;
  return headers;
}

async function post(method, body, token, signal) {
  const response = await fetch(API + method, {
    method: "POST",
    headers: requestHeaders(token),
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    let status;
    try {
      status = await response.json();
    } catch {
      status = { message: `${response.status} ${response.statusText}` };
    }
    throw new ApiError(response.status, status, Number(response.headers.get("retry-after")) || 0);
  }
  return response;
}

async function unary(method, body, token) {
  return (await post(method, body, token)).json();
}

// The lines of an NDJSON body as they arrive.
async function* lines(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.trim()) yield line;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function showError(error) {
  const where = error instanceof ApiError ? `${error.httpStatus} ${error.reason || "ERROR"}: ` : "";
  $("error").textContent = where + error.message;
  $("error").dataset.reason = error.reason || "";
  $("error").dataset.httpStatus = error.httpStatus ?? "";
}

function showEvent(event) {
  const item = document.createElement("li");
  item.dataset.version = event.version; // int64: a string in the JSON mapping
  item.dataset.type = event.type;
  item.textContent = `${event.version} ${event.type}`;
  $("events").append(item);
  item.scrollIntoView({ block: "nearest" });
}

function showState(gameState) {
  const state = gameState.state || {};
  const round = state.round;
  $("phase").textContent = state.phase ?? "–";
  if (!round) {
    $("round").textContent = "–";
  } else if (round.type === "operating_round") {
    $("round").textContent = `operating round ${round.number} of ${round.of}`;
  } else {
    $("round").textContent = round.type.replaceAll("_", " ") + (round.number ? ` ${round.number}` : "");
  }
  $("game").dataset.stateVersion = gameState.version;
}

const sleep = (seconds) => new Promise((done) => setTimeout(done, seconds * 1000));

// Watches the game from its first event to GameEnded; after a dropped stream it resumes from
// the version after the last one shown, so nothing is shown twice or missed.
async function watch(gameId, token) {
  let next = 1;
  let failures = 0;
  let connections = 0;
  for (;;) {
    const controller = new AbortController();
    currentWatch = controller;
    $("game").dataset.connections = ++connections;
    $("connection").textContent = `connecting (from version ${next})`;
    try {
      const request = { gameId, fromVersion: String(next), includeState: true, heartbeatSeconds: 5 };
      const response = await post("GameService/WatchGame", request, token, controller.signal);
      $("connection").textContent = "watching";
      for await (const line of lines(response.body)) {
        const item = JSON.parse(line);
        if (item.error) throw new ApiError(200, item.error, 0);
        failures = 0;
        if (item.event) {
          showEvent(item.event);
          next = Number(item.event.version) + 1;
        }
        if (item.state) showState(item.state);
        if (item.event && item.event.type === "GameEnded") {
          $("connection").textContent = "game over";
          return;
        }
      }
    } catch (error) {
      if (error instanceof ApiError && !error.retryable) {
        $("connection").textContent = "stopped";
        showError(error);
        return;
      }
    } finally {
      controller.abort();
    }
    failures += 1;
    $("connection").textContent = "reconnecting";
    await sleep(Math.min(0.2 * 2 ** failures, 5));
  }
}

async function createTable(event) {
  event.preventDefault();
  $("error").textContent = "";
  $("create").disabled = true;
  try {
    const seats = Number($("seats").value);
    const created = await unary("LobbyService/CreateTable", { seatCount: seats });
    const tableId = created.table.tableId;
    const game = $("game");
    game.dataset.tableId = tableId;
    game.dataset.hostToken = created.hostToken;
    const tokens = {};
    for (let n = 1; n <= seats; n += 1) {
      const joined = await unary("LobbyService/JoinTable", { tableId, playerName: `Player ${n}` });
      tokens[joined.seat] = joined.seatToken;
      game.setAttribute(`data-seat-${joined.seat}`, joined.seatToken);
    }
    const started = await unary("LobbyService/StartTable", { tableId }, created.hostToken);
    $("events").replaceChildren();
    $("game-id").textContent = started.gameId;
    game.dataset.gameId = started.gameId;
    // As a seat: a spectator might be shown the game some actions late.
    watch(started.gameId, tokens[1]);
  } catch (error) {
    showError(error);
  } finally {
    $("create").disabled = false;
  }
}

// For tests: drop the watch's connection as a network failure would.
window.shikokuDemo = { dropStream: () => currentWatch && currentWatch.abort() };

$("api-key").value = new URLSearchParams(location.search).get("api_key") || "";
$("create-form").addEventListener("submit", createTable);
