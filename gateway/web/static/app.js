// The page: without a game in the address, the lobby (lobby.js); with ?game=<id>, that game's
// board (board.js), played as the seat whose token the address gives (&seat=N&token=…, then
// kept in this browser and taken out of the address) or this browser holds (credentials.js),
// else watched as a spectator. The API key comes from ?api_key= or this browser's store. Each
// module has one job: client (API calls, through @shikoku/client), lobby (tables and seats),
// board (the open game), credentials (what this browser keeps), alerts (the error line).
import { clearError, showError } from "./alerts.js";
import { Api } from "./client.js";
import { OpenGame } from "./board.js";
import * as credentials from "./credentials.js";
import { Lobby } from "./lobby.js";

const $ = (id) => document.getElementById(id);
const board = $("board");
const lobby = $("lobby");
let current = null; // the open game, or the lobby

async function openGame(api, gameId) {
  clearError();
  lobby.hidden = true;
  board.hidden = false;
  document.title = `Shikoku 1889 – ${gameId}`;
  const { seat, token } = credentials.seat(gameId) || { seat: 0, token: "" };
  board.dataset.gameId = gameId;
  board.dataset.seat = seat || "";
  delete board.dataset.version;
  $("game-id").textContent = gameId;
  $("role").textContent = token ? `playing ${seat ? `seat ${seat}` : "with a token"}` : "spectator";
  try {
    const title = await api.call("TitleService/GetTitle", { title: "1889" }, { token });
    current = new OpenGame(api, title, { gameId, token, seat, hostToken: credentials.hostToken(gameId) });
    current.run();
  } catch (error) {
    showError(error);
  }
}

function openLobby(api) {
  board.hidden = true;
  lobby.hidden = false;
  document.title = "Shikoku 1889 – lobby";
  current = new Lobby(api, lobby, {
    openGame: (tableId) => location.assign(`/?${new URLSearchParams({ game: tableId })}`),
  });
  current.run();
}

// The address: a key or a seat token in it is kept in this browser; the token then leaves it.
const params = new URLSearchParams(location.search);
if (params.get("api_key")) credentials.setApiKey(params.get("api_key").trim());
const gameId = (params.get("game") || "").trim();
if (gameId && params.get("token"))
  credentials.setSeat(gameId, Number(params.get("seat")) || 0, params.get("token").trim());
if (params.has("token") || params.has("seat")) {
  params.delete("token");
  params.delete("seat");
  history.replaceState(null, "", `?${params}`);
}

// The header's form opens a game by id, with a seat token to play it.
const form = $("open-form");
form.game.value = gameId;
form.api_key.value = credentials.apiKey();
const held = gameId && credentials.seat(gameId);
if (held) [form.seat.value, form.token.value] = [held.seat || "", held.token];
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const id = form.game.value.trim();
  credentials.setApiKey(form.api_key.value.trim());
  if (form.token.value.trim()) credentials.setSeat(id, Number(form.seat.value) || 0, form.token.value.trim());
  location.assign(`/?${new URLSearchParams({ game: id })}`);
});

const api = new Api({ apiKey: credentials.apiKey() });
if (gameId) openGame(api, gameId);
else openLobby(api);

// For tests and the curious: drop the open game's (or the lobby's player) stream as a network
// failure would.
window.shikokuBoard = { dropStream: () => current && current.watch && current.watch.drop() };
