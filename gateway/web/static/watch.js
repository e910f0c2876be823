// Watching a game (GameService.WatchGame with its state): every event once, in order, and the
// state after each batch. A dropped or silent stream is resumed from the last version seen + 1,
// so nothing is missed or shown twice.
import { ApiError } from "./api.js";

const HEARTBEAT_SECONDS = 10;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

export class GameWatch {
  constructor(api, gameId, token, { onEvent, onState, onStatus, onError }) {
    Object.assign(this, { api, gameId, token, onEvent, onState, onStatus, onError });
    this.next = 1;
    this.connections = 0;
    this.stopped = false;
    this.controller = null;
  }

  // Drops the open connection, as a network failure would; the watch then resumes.
  drop() {
    if (this.controller) this.controller.abort();
  }

  stop() {
    this.stopped = true;
    this.drop();
  }

  async run() {
    let failures = 0;
    while (!this.stopped) {
      const controller = new AbortController();
      this.controller = controller;
      this.connections += 1;
      this.onStatus(`connecting (from version ${this.next})`, this.connections);
      let silence = null;
      const quiet = () => {
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), 3 * HEARTBEAT_SECONDS * 1000);
      };
      try {
        quiet();
        const request = {
          gameId: this.gameId,
          fromVersion: String(this.next),
          includeState: true,
          heartbeatSeconds: HEARTBEAT_SECONDS,
        };
        for await (const item of this.api.stream("GameService/WatchGame", request, {
          token: this.token,
          signal: controller.signal,
        })) {
          quiet();
          if (failures || this.connections) this.onStatus("watching", this.connections);
          failures = 0;
          if (item.event) {
            this.onEvent(item.event);
            this.next = Number(item.event.version) + 1;
          }
          if (item.state) this.onState(item.state);
          if (item.event && item.event.type === "GameEnded") {
            this.onStatus("game over", this.connections);
            return;
          }
        }
      } catch (error) {
        // An aborted fetch (a drop, a silent stream) is a DOMException: resumed like a break.
        if (error instanceof ApiError && !error.retryable) {
          this.onStatus("stopped", this.connections);
          this.onError(error);
          return;
        }
      } finally {
        clearTimeout(silence);
        controller.abort();
      }
      failures += 1;
      this.onStatus("reconnecting", this.connections);
      await sleep(Math.min(200 * 2 ** failures, 5000));
    }
  }
}
