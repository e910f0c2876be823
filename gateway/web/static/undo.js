// Taking back the seat's last action: `{"undo": {}}` through SubmitCommand, offered only to a
// seat at a table that allows undo (LobbyService.GetTable: options.undoAllowed; the game id is
// the table id). The page guesses from the event stream whether the last action still counting
// is this seat's and says so, but the server decides: its refusals are shown in words.
import { h } from "./html.js";

const SENTENCES = {
  UNDO_NOT_ALLOWED: "Undo is off at this table",
  NOTHING_TO_UNDO: "Nothing to take back",
  NOT_YOUR_ACTION: "The last action was another player's — only they can take it back",
  GAME_OVER: "The game is over: nothing can be taken back",
};

function commandId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// A refusal with the policy's reason said as a sentence (the reason itself is kept).
export function inWords(error) {
  const sentence = SENTENCES[error.reason];
  return sentence ? { reason: error.reason, code: error.code, message: sentence } : error;
}

export class UndoControl {
  constructor(element, { api, gameId, token, seat, onError, onSent }) {
    Object.assign(this, { element, api, gameId, token, seat, onError, onSent });
    this.allowed = false;
    this.live = true;
    this.busy = false;
    this.over = false;
    this.commands = []; // {version, seat, type} of each event that began a command's batch
    this.revoked = new Set(); // versions an Undone took back, and the Undone events themselves
    this.button = h(
      "button",
      { type: "button", dataset: { control: "undo" }, onclick: () => this.undo() },
      "Undo",
    );
  }

  // Asks the table whether it allows undo; only a seat's page may offer it.
  async run() {
    if (!this.token || !this.seat) {
      this.element.dataset.undo = "no-seat";
      return;
    }
    try {
      const request = { tableId: this.gameId };
      const table = await this.api.call("LobbyService/GetTable", request, { token: this.token });
      this.allowed = Boolean(table.options && table.options.undoAllowed);
    } catch (error) {
      this.onError(error);
    }
    this.element.dataset.undo = this.allowed ? "allowed" : "off";
    this.#render();
  }

  noteEvent(event) {
    const version = Number(event.version);
    const command = event.command;
    if (command) this.commands.push({ version, seat: Number(command.seat || 0), type: command.type });
    if (event.type === "Undone") {
      const { first, last } = event.payload || {};
      this.revoked.add(version);
      for (let v = Number(first); v <= Number(last); v += 1) this.revoked.add(v);
    }
    if (event.type === "GameEnded") this.over = true;
    this.#render();
  }

  // Hidden while the page shows the past: no command from there.
  setLive(live) {
    this.live = live;
    this.#render();
  }

  // Why an undo would be refused now, as far as the events seen tell; "" if it may succeed.
  #doubt() {
    if (this.over) return SENTENCES.GAME_OVER;
    const last = this.commands.filter((c) => !this.revoked.has(c.version)).at(-1);
    if (!last) return this.commands.length ? SENTENCES.NOT_YOUR_ACTION : "";
    if (last.type === "CreateGame" || last.seat !== this.seat) return SENTENCES.NOT_YOUR_ACTION;
    return "";
  }

  #render() {
    if (!this.allowed) {
      this.element.replaceChildren();
      return;
    }
    const doubt = this.#doubt();
    this.button.hidden = !this.live;
    this.button.disabled = this.busy;
    this.button.dataset.likely = doubt ? "no" : "yes";
    this.button.title = doubt || "Take back your last action";
    this.element.replaceChildren(this.button);
  }

  async undo() {
    this.busy = true;
    this.#render();
    const request = { gameId: this.gameId, command: { undo: {} }, commandId: commandId() };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.api.call("GameService/SubmitCommand", request, { token: this.token });
        this.onSent();
        break;
      } catch (error) {
        if (error.retryable && attempt < 3) continue;
        this.onError(inWords(error));
        break;
      }
    }
    this.busy = false;
    this.#render();
  }
}
