// A server stream the page keeps open: a dropped connection, or one silent for three
// heartbeats, is opened again after a growing pause, until the server refuses it for good
// (a non-retryable error) or the page stops it. What each stream sends, and where it resumes
// from, is its subclass's: `connecting()` names the attempt, `open(signal)` opens the stream,
// `take(item, first)` handles an item (true ends the watch), `announces(item)` says whether an
// item shows the watch as live.
import { ApiError } from "./client.js";

export const HEARTBEAT_SECONDS = 10;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

export class ResumableWatch {
  constructor({ onStatus, onError }) {
    Object.assign(this, { onStatus, onError });
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

  announces(_item) {
    return true;
  }

  async run() {
    let failures = 0;
    while (!this.stopped) {
      const controller = new AbortController();
      this.controller = controller;
      this.connections += 1;
      this.onStatus(this.connecting(), this.connections);
      let silence = null;
      const quiet = () => {
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), 3 * HEARTBEAT_SECONDS * 1000);
      };
      let first = true; // the first item of this connection
      try {
        quiet();
        for await (const item of this.open(controller.signal)) {
          quiet();
          if (failures || this.announces(item)) this.onStatus("watching", this.connections);
          failures = 0;
          if (this.take(item, first)) return;
          first = false;
        }
        // The server ended the stream (a restart, a drain): open it again.
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
      if (this.stopped) return;
      this.onStatus("reconnecting", this.connections);
      await sleep(Math.min(200 * 2 ** failures, 5000));
    }
  }
}
