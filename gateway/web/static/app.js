// The board page: opens a game by id (?game=t-…; &token=… and &seat=N to play that seat),
// draws it from the title data and the state the event stream brings, and offers the seat's
// legal actions. Each module has one job: api (Connect calls), watch (the stream with resume),
// map and market (SVG), panels (tables), events (the log in words), actions (controls).
import { ActionPanel } from "./actions.js";
import { Api } from "./api.js";
import { EventLog } from "./events.js";
import { BoardMap } from "./map.js";
import { Market } from "./market.js";
import { renderCorporations, renderPlayers, renderStatus, seatName } from "./panels.js";
import { GameWatch } from "./watch.js";

const $ = (id) => document.getElementById(id);
const page = $("board");
let current = null; // the open game

function showError(error) {
  const reason = error.reason || error.code || "ERROR";
  $("error").textContent = `${reason}: ${error.message}`;
  $("error").dataset.reason = error.reason || "";
  $("error").dataset.code = error.code || "";
}

function clearError() {
  $("error").textContent = "";
  delete $("error").dataset.reason;
  delete $("error").dataset.code;
}

class OpenGame {
  constructor(api, title, { gameId, token, seat }) {
    Object.assign(this, { api, title, gameId, token, seat });
    this.state = null;
    this.listing = 0; // the version whose legal actions are being asked for
    this.map = new BoardMap($("map-container"), title, { onHexClick: (hex) => this.actions.selectHex(hex) });
    this.market = new Market($("market"), title.market);
    this.log = new EventLog($("events"));
    this.actions = new ActionPanel($("actions"), {
      map: this.map,
      api,
      gameId,
      token,
      seat,
      onError: showError,
      onSent: () => clearError(),
    });
    this.watch = new GameWatch(api, gameId, token, {
      onEvent: (event) =>
        this.log.add(event, (s) => (this.state ? seatName(this.state.state, s) : `seat ${s}`)),
      onState: (state) => this.show(state),
      onStatus: (text, connections) => {
        $("connection").textContent = text;
        page.dataset.connections = connections;
      },
      onError: showError,
    });
  }

  show(gameState) {
    this.state = gameState;
    const document = gameState.state || {};
    this.map.render(document);
    this.market.render(document.corporations);
    renderStatus($("status"), gameState, this.title);
    renderPlayers($("players"), gameState);
    renderCorporations($("corporations"), gameState, this.title);
    page.dataset.version = gameState.version;
    this.refreshActions(Number(gameState.version));
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

async function open(form) {
  clearError();
  const gameId = form.game.value.trim();
  const token = form.token.value.trim();
  const seat = Number(form.seat.value) || 0;
  const api = new Api({ apiKey: form.api_key.value.trim() });
  if (current) current.watch.stop();
  page.dataset.gameId = gameId;
  page.dataset.seat = seat || "";
  delete page.dataset.version;
  try {
    const title = await api.call("TitleService/GetTitle", { title: "1889" }, { token });
    current = new OpenGame(api, title, { gameId, token, seat });
    $("game-id").textContent = gameId;
    $("role").textContent = token ? `playing ${seat ? `seat ${seat}` : "with a token"}` : "spectator";
    current.watch.run();
  } catch (error) {
    showError(error);
  }
}

const params = new URLSearchParams(location.search);
const form = $("open-form");
for (const name of ["api_key", "game", "token", "seat"]) form[name].value = params.get(name) || "";
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const query = new URLSearchParams();
  for (const name of ["api_key", "game", "token", "seat"])
    if (form[name].value) query.set(name, form[name].value);
  history.replaceState(null, "", `?${query}`);
  open(form);
});
if (form.game.value) open(form);

// For tests and the curious: drop the event stream as a network failure would.
window.shikokuBoard = { dropStream: () => current && current.watch.drop() };
