// The host console: a tournament by id with its host's credential (?tournament=tn-…&token=…,
// or the form; both kept in this browser's localStorage so that a reload comes back). It is
// fed by one stream, LobbyService.WatchTournament (host_watch.js): the rounds, the current
// round's tables live (host_tables.js), the standings (host_panels.js); and it sends the host's
// commands: StartRound, ReplaceSeat, EndGame, ForfeitSeat. All through the public API.
import { Api } from "./client.js";
import { renderNotifications, renderRounds, renderStandings } from "./host_panels.js";
import { TableBoard } from "./host_tables.js";
import { TournamentWatch } from "./host_watch.js";

const STORAGE = "shikoku.host";
const FIELDS = ["tournament", "token", "api_key"];
const TICK_MS = 500;
// A live table whose game has not moved for this long is marked stalled (?stall=SECONDS).
const STALL_SECONDS = Number(new URLSearchParams(location.search).get("stall")) || 300;

const $ = (id) => document.getElementById(id);
const page = $("console");
let current = null; // the open tournament

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

function notify(text) {
  $("notice").textContent = text;
}

// A request id (StartRound, ReplaceSeat): the same for each retry of one intent.
function newRequestId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

class HostConsole {
  constructor(api, tournamentId, token) {
    Object.assign(this, { api, tournamentId, token });
    this.tournament = null;
    this.offsetMs = 0; // server time minus this browser's, from the heartbeats
    this.updates = 0; // tables the stream has brought
    this.requestIds = new Map(); // what a request is for -> its id
    this.busy = false;
    this.board = new TableBoard($("tables"), {
      onEnd: (table) => this.endTable(table),
      onForfeit: (table, seat) => this.forfeit(table, seat),
      onReplace: (table, seat, playerId) => this.replace(table, seat, playerId),
      boardLink: (gameId) => `/?${new URLSearchParams({ api_key: api.apiKey, game: gameId })}`,
    });
    this.watch = new TournamentWatch(api, tournamentId, token, {
      onTournament: (tournament, first) => {
        const shown = this.rounds.length;
        this.showTournament(tournament);
        if (first || this.rounds.length !== shown) this.fillTables();
      },
      onTable: (table) => this.showTable(table),
      onHeartbeat: (beat) => {
        if (Number(beat.atMs)) this.offsetMs = Number(beat.atMs) - Date.now();
      },
      onStatus: (text, connections) => {
        $("connection").textContent = text;
        page.dataset.connections = connections;
      },
      onError: showError,
    });
    this.ticker = setInterval(() => this.tick(), TICK_MS);
  }

  stop() {
    this.watch.stop();
    clearInterval(this.ticker);
  }

  tick() {
    this.board.tick(Date.now() + this.offsetMs, STALL_SECONDS * 1000);
  }

  get rounds() {
    return (this.tournament && this.tournament.rounds) || [];
  }

  showTournament(tournament) {
    const before = this.tournament;
    this.tournament = tournament;
    const rounds = this.rounds;
    const last = rounds[rounds.length - 1] || null;
    const planned = Number(tournament.roundCount || 0);
    const names = new Map((tournament.standings || []).map((s) => [s.playerId, s.displayName]));
    $("tournament-name").textContent = `${tournament.name} (${tournament.tournamentId})`;
    $("round-count").textContent = `${rounds.length} of ${planned || "?"} started${tournament.finished ? "; over" : ""}`;
    $("round-title").textContent = last ? `Round ${last.number}${planned ? ` of ${planned}` : ""}` : "No round yet";
    renderRounds($("rounds"), tournament);
    renderStandings($("standings"), tournament.standings);
    this.board.showRound(last, names);
    page.dataset.tournamentId = tournament.tournamentId;
    page.dataset.round = last ? last.number : 0;
    page.dataset.roundFinished = !last || last.finished ? "yes" : "no";
    page.dataset.finished = tournament.finished ? "yes" : "no";
    this.showStartButton();
    if (!before || JSON.stringify(before.rounds) !== JSON.stringify(tournament.rounds)) this.refreshHealth();
    this.tick();
  }

  // The round's tables the stream has not brought yet, from the tournament's listing (once a
  // round or a connection, a page of 200 at a time), so every card is filled before its
  // table's first change; the stream's own pictures of a table always win.
  async fillTables() {
    let pageToken = "";
    try {
      do {
        if (!this.board.missing().length) return;
        const request = { tournamentId: this.tournamentId, pageSize: 200, pageToken };
        const listed = await this.api.call("LobbyService/ListTables", request, { token: this.token });
        for (const table of listed.tables || []) this.board.fill(table);
        pageToken = listed.nextPageToken || "";
      } while (pageToken);
    } catch (error) {
      showError(error);
    }
  }

  showTable(table) {
    this.board.update(table);
    this.updates += 1;
    page.dataset.updates = this.updates;
    this.tick();
  }

  showStartButton() {
    const button = $("start-round");
    const rounds = this.rounds;
    const last = rounds[rounds.length - 1];
    const planned = Number(this.tournament.roundCount || 0);
    const next = rounds.length + 1;
    if (this.tournament.finished) {
      button.textContent = "The tournament is over";
      button.disabled = true;
    } else if (last && !last.finished) {
      button.textContent = `Round ${last.number} in progress`;
      button.disabled = true;
    } else {
      button.textContent = `Start round ${next}${planned ? ` of ${planned}` : ""}`;
      button.disabled = this.busy;
    }
    button.dataset.round = next;
  }

  requestId(purpose) {
    if (!this.requestIds.has(purpose)) this.requestIds.set(purpose, newRequestId());
    return this.requestIds.get(purpose);
  }

  async send(method, request, done) {
    clearError();
    this.busy = true;
    page.dataset.busy = "yes";
    try {
      done(await this.api.call(method, request, { token: this.token }));
    } catch (error) {
      showError(error);
    } finally {
      this.busy = false;
      page.dataset.busy = "no";
      if (this.tournament) this.showStartButton();
    }
  }

  startRound() {
    const next = this.rounds.length + 1;
    $("start-round").disabled = true;
    const request = { tournamentId: this.tournamentId, requestId: this.requestId(`round ${next}`) };
    return this.send("LobbyService/StartRound", request, (tournament) => {
      this.showTournament(tournament);
      notify(`Round ${next} started.`);
    });
  }

  endTable(table) {
    if (!confirm(`End ${table.displayName || table.tableId} now? The game is scored as it stands.`)) return;
    return this.send("LobbyService/EndGame", { tableId: table.tableId }, (ended) => {
      this.showTable(ended);
      notify(`${table.displayName || table.tableId} is ending; its card shows it once the game has ended.`);
    });
  }

  forfeit(table, seat) {
    if (!confirm(`Seat ${seat} of ${table.displayName || table.tableId} is out of time: forfeit it?`)) return;
    return this.send("LobbyService/ForfeitSeat", { tableId: table.tableId, seat }, (ended) => {
      this.showTable(ended);
      notify(`Seat ${seat} of ${table.displayName || table.tableId} forfeited.`);
    });
  }

  replace(table, seat, playerId) {
    const requestId = this.requestId(`replace ${table.tableId} ${seat} ${playerId}`);
    const request = { tableId: table.tableId, seat, playerId, requestId };
    return this.send("LobbyService/ReplaceSeat", request, (joined) => {
      this.showTable(joined.table);
      const holder = (joined.table.seats || []).find((s) => s.number === seat);
      notify(`Seat ${seat} of ${table.displayName || table.tableId} is now ${holder ? holder.playerName : playerId}'s.`);
    });
  }

  // Asked when the rounds change and on the host's request; a server without it says so.
  async refreshHealth() {
    const note = $("notifications-note");
    try {
      const health = await this.api.call(
        "LobbyService/GetNotificationHealth",
        { tournamentId: this.tournamentId },
        { token: this.token },
      );
      renderNotifications($("notifications"), health);
      const failing = (health.players || []).filter((p) => Number(p.givenUp || 0) || p.lastError).length;
      const targets = (health.players || []).filter((p) => p.hasTarget).length;
      note.textContent = `${targets} of ${(health.players || []).length} players have a webhook; ${failing} failing.`;
      note.dataset.state = "answered";
    } catch (error) {
      $("notifications").replaceChildren();
      note.textContent = `Not available: ${error.reason || error.code}`;
      note.dataset.state = "unavailable";
    }
  }
}

// --- the form, the address and the stored credentials

const form = $("open-form");

function stored() {
  try {
    return JSON.parse(localStorage.getItem(STORAGE) || "{}");
  } catch {
    return {};
  }
}

function open() {
  clearError();
  notify("");
  const [tournamentId, token, apiKey] = FIELDS.map((name) => form[name].value.trim());
  localStorage.setItem(STORAGE, JSON.stringify({ tournament: tournamentId, token, api_key: apiKey }));
  // The address keeps the tournament and the key, never the credential (history, screenshots).
  const query = new URLSearchParams({ tournament: tournamentId });
  if (apiKey) query.set("api_key", apiKey);
  const stall = new URLSearchParams(location.search).get("stall");
  if (stall) query.set("stall", stall);
  history.replaceState(null, "", `?${query}`);
  if (current) current.stop();
  current = new HostConsole(new Api({ apiKey }), tournamentId, token);
  current.watch.run();
}

const params = new URLSearchParams(location.search);
const remembered = stored();
for (const name of FIELDS) form[name].value = params.get(name) || remembered[name] || "";
form.addEventListener("submit", (event) => {
  event.preventDefault();
  open();
});
$("forget").addEventListener("click", () => {
  localStorage.removeItem(STORAGE);
  form.token.value = "";
  if (current) current.stop();
  current = null;
  notify("The stored tournament and host token are forgotten.");
});
$("start-round").addEventListener("click", () => current && current.startRound());
$("refresh-notifications").addEventListener("click", () => current && current.refreshHealth());
if (form.tournament.value && form.token.value) open();

// For tests and the curious: drop the tournament's stream as a network failure would.
window.shikokuHost = { dropStream: () => current && current.watch.drop() };
