// Watching the registered player's own live tables (LobbyService.WatchPlayer): the whole list
// first, then again whenever one of them changes, and again unchanged after each quiet
// heartbeat. Every item replaces what was shown, so a dropped or silent stream is simply
// opened again.
import { HEARTBEAT_SECONDS, ResumableWatch } from "./resumable.js";

export class PlayerWatch extends ResumableWatch {
  constructor(api, credential, { onTables, onStatus, onError }) {
    super({ onStatus, onError });
    Object.assign(this, { api, credential, onTables });
  }

  connecting() {
    return "connecting";
  }

  open(signal) {
    const request = { heartbeatSeconds: HEARTBEAT_SECONDS };
    return this.api.stream("LobbyService/WatchPlayer", request, { token: this.credential, signal });
  }

  take(item) {
    this.onTables(item.tables || []);
    return false;
  }
}
