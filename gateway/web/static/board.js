// The open game: draws it from the title data and the state the event stream brings, and
// offers the seat's legal actions. Each module has one job: watch (the stream with resume),
// map and market (SVG), panels (tables), events (the log in words), actions (controls), chat
// (the table's messages), history (the board at an earlier version), undo (taking an action
// back).
import { ActionPanel } from "./actions.js";
import { clearError, showError } from "./alerts.js";
import { ChatPanel } from "./chat.js";
import { EventLog } from "./events.js";
import { HistoryView } from "./history.js";
import { h } from "./html.js";
import { BoardMap } from "./map.js";
import { Market } from "./market.js";
import { renderCorporations, renderPlayers, renderStatus, seatName } from "./panels.js";
import { UndoControl } from "./undo.js";
import { GameWatch } from "./watch.js";

const $ = (id) => document.getElementById(id);
const page = $("board");

export class OpenGame {
  constructor(api, title, { gameId, token, seat, hostToken = "" }) {
    Object.assign(this, { api, title, gameId, token, seat, hostToken });
    this.state = null; // the state shown: the latest, or an earlier one while in the history
    this.latest = null; // the latest state the stream has brought
    this.listing = 0; // the version whose legal actions are being asked for
    this.map = new BoardMap($("map-container"), title, {
      onHexClick: (hex) => this.history.live && this.actions.selectHex(hex),
    });
    this.market = new Market($("market"), title.market);
    this.log = new EventLog($("events"));
    const bar = $("history-bar");
    const undoSlot = h("span", { id: "undo" });
    bar.replaceChildren(undoSlot);
    // What every control that sends a command for the seat is given.
    const sending = { api, gameId, token, seat, onError: showError, onSent: () => clearError() };
    this.undo = new UndoControl(undoSlot, sending);
    this.history = new HistoryView(bar, $("events"), {
      api,
      gameId,
      token,
      onShow: (state) => this.showPast(state),
      onLive: () => this.backToLive(),
      onError: showError,
    });
    page.dataset.viewing = "live";
    $("actions").hidden = false; // a game open before may have left them put away
    this.actions = new ActionPanel($("actions"), { ...sending, map: this.map });
    this.watch = new GameWatch(api, gameId, token, {
      onEvent: (event) => {
        this.log.add(event, (s) => (this.latest ? seatName(this.latest.state, s) : `seat ${s}`));
        this.history.noteEvent(event);
        this.undo.noteEvent(event);
      },
      onState: (state) => this.show(state),
      onStatus: (text, connections) => {
        $("connection").textContent = text;
        page.dataset.connections = connections;
      },
      onError: showError,
    });
    // The game id is its table's id: the chat is the table's.
    this.chat = new ChatPanel($("chat"), { api, tableId: gameId, token, hostToken, seat });
  }

  run() {
    this.watch.run();
    this.chat.run();
    this.undo.run();
  }

  stop() {
    this.watch.stop();
    this.chat.stop();
    this.history.stop();
  }

  // The stream's state after a batch: drawn while live; kept for "Live" while in the history.
  show(gameState) {
    this.latest = gameState;
    this.history.noteLatest(Number(gameState.version));
    if (!this.history.live) return;
    this.draw(gameState);
    this.refreshActions(Number(gameState.version));
  }

  // An earlier version: drawn, with the seat's controls put away (no command from the past).
  showPast(gameState) {
    this.draw(gameState);
    page.dataset.viewing = "history";
    $("actions").hidden = true;
    this.undo.setLive(false);
  }

  backToLive() {
    page.dataset.viewing = "live";
    $("actions").hidden = false;
    this.undo.setLive(true);
    if (this.latest) this.show(this.latest);
  }

  draw(gameState) {
    this.state = gameState;
    const document = gameState.state || {};
    this.map.render(document);
    this.market.render(document.corporations);
    renderStatus($("status"), gameState, this.title);
    renderPlayers($("players"), gameState);
    renderCorporations($("corporations"), gameState, this.title);
    page.dataset.version = gameState.version;
  }

  async refreshActions(version) {
    if (!this.token) {
      this.actions.update(version, []);
      page.dataset.actionsVersion = version;
      return;
    }
    this.listing = version;
    try {
      const listed = await this.api.call(
        "GameService/ListLegalActions",
        { gameId: this.gameId },
        { token: this.token },
      );
      // A listing of another version than the one shown waits for the stream to catch up.
      if (this.listing !== version || Number(listed.version) !== version) return;
      this.actions.update(version, listed.actions || []);
      page.dataset.actionsVersion = version;
    } catch (error) {
      showError(error);
    }
  }
}
