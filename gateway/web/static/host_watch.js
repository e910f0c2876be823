// Watching a tournament (LobbyService.WatchTournament): the tournament first, then each change
// of a table of its current round, the tournament again when a round starts or a result is
// recorded, and heartbeats in between. Each connection starts over with the tournament (its
// watcher is told which tournament is a connection's first), so a dropped or silent stream is
// simply opened again: what it brings replaces what was shown.
import { ApiError } from "./api.js";

const HEARTBEAT_SECONDS = 10;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

export class TournamentWatch {
  constructor(api, tournamentId, token, { onTournament, onTable, onHeartbeat, onStatus, onError }) {
    Object.assign(this, { api, tournamentId, token, onTournament, onTable, onHeartbeat, onStatus, onError });
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
      this.onStatus("connecting", this.connections);
      let silence = null;
      const quiet = () => {
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), 3 * HEARTBEAT_SECONDS * 1000);
      };
      let first = true; // the first item of this connection
      try {
        quiet();
        const request = { tournamentId: this.tournamentId, heartbeatSeconds: HEARTBEAT_SECONDS };
        for await (const item of this.api.stream("LobbyService/WatchTournament", request, {
          token: this.token,
          signal: controller.signal,
        })) {
          quiet();
          if (failures || item.tournament) this.onStatus("watching", this.connections);
          failures = 0;
          if (item.tournament) this.onTournament(item.tournament, first);
          first = false;
          if (item.table) this.onTable(item.table);
          if (item.heartbeat) this.onHeartbeat(item.heartbeat);
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
