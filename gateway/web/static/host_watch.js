// Watching a tournament (LobbyService.WatchTournament): the tournament first, then each change
// of a table of its current round, the tournament again when a round starts or a result is
// recorded, and heartbeats in between. Each connection starts over with the tournament (its
// watcher is told which tournament is a connection's first), so a dropped or silent stream is
// simply opened again: what it brings replaces what was shown.
import { HEARTBEAT_SECONDS, ResumableWatch } from "./resumable.js";

export class TournamentWatch extends ResumableWatch {
  constructor(api, tournamentId, token, { onTournament, onTable, onHeartbeat, onStatus, onError }) {
    super({ onStatus, onError });
    Object.assign(this, { api, tournamentId, token, onTournament, onTable, onHeartbeat });
  }

  connecting() {
    return "connecting";
  }

  open(signal) {
    const request = { tournamentId: this.tournamentId, heartbeatSeconds: HEARTBEAT_SECONDS };
    return this.api.stream("LobbyService/WatchTournament", request, { token: this.token, signal });
  }

  announces(item) {
    return Boolean(item.tournament);
  }

  take(item, first) {
    if (item.tournament) this.onTournament(item.tournament, first);
    if (item.table) this.onTable(item.table);
    if (item.heartbeat) this.onHeartbeat(item.heartbeat);
    return false;
  }
}
