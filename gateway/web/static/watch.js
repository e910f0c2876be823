// Watching a game (GameService.WatchGame with its state): every event once, in order, and the
// state after each batch. A dropped or silent stream is resumed from the last version seen + 1,
// so nothing is missed or shown twice.
import { HEARTBEAT_SECONDS, ResumableWatch } from "./resumable.js";

export class GameWatch extends ResumableWatch {
  constructor(api, gameId, token, { onEvent, onState, onStatus, onError }) {
    super({ onStatus, onError });
    Object.assign(this, { api, gameId, token, onEvent, onState });
    this.next = 1;
  }

  connecting() {
    return `connecting (from version ${this.next})`;
  }

  open(signal) {
    const request = {
      gameId: this.gameId,
      fromVersion: String(this.next),
      includeState: true,
      heartbeatSeconds: HEARTBEAT_SECONDS,
    };
    return this.api.stream("GameService/WatchGame", request, { token: this.token, signal });
  }

  take(item) {
    if (item.event) {
      this.onEvent(item.event);
      this.next = Number(item.event.version) + 1;
    }
    if (item.state) this.onState(item.state);
    if (item.event && item.event.type === "GameEnded") {
      this.onStatus("game over", this.connections);
      return true;
    }
    return false;
  }
}
