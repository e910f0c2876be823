// The page: opens a game by id (?game=t-…; &token=… and &seat=N to play that seat) as a board
// (board.js). Each module has one job: api (Connect calls), board (the open game), alerts (the
// error line).
import { clearError, showError } from "./alerts.js";
import { Api } from "./api.js";
import { OpenGame } from "./board.js";

const $ = (id) => document.getElementById(id);
const page = $("board");
let current = null; // the open game

async function open(form) {
  clearError();
  const gameId = form.game.value.trim();
  const token = form.token.value.trim();
  const seat = Number(form.seat.value) || 0;
  const api = new Api({ apiKey: form.api_key.value.trim() });
  if (current) current.stop();
  page.dataset.gameId = gameId;
  page.dataset.seat = seat || "";
  delete page.dataset.version;
  try {
    const title = await api.call("TitleService/GetTitle", { title: "1889" }, { token });
    current = new OpenGame(api, title, { gameId, token, seat });
    $("game-id").textContent = gameId;
    $("role").textContent = token ? `playing ${seat ? `seat ${seat}` : "with a token"}` : "spectator";
    current.run();
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
