// The lobby (#lobby): the player's name (registered once, LobbyService.RegisterPlayer), their
// own games (WatchPlayer's live tables, and the tables this browser holds a seat or host token
// at, read with GetTable), the open tables (ListTables, refreshed every few seconds and when
// the page is shown again), creating a table, and a seat's join, ready, leave and the host's
// start. Credentials are kept by credentials.js; opening a started table's board is the
// page's (app.js): `openGame(tableId)`. Each module has one job: lobby_tables (rows in
// words), lobby_create (the form as a request), lobby_watch (the player's stream).
import { clearError, showError } from "./alerts.js";
import * as credentials from "./credentials.js";
import { h } from "./html.js";
import { createRequest, wireClock } from "./lobby_create.js";
import { actingSeats, statusOf, tableOf, tableRow } from "./lobby_tables.js";
import { PlayerWatch } from "./lobby_watch.js";

// How often the open tables and this browser's tables are read again (?refresh=SECONDS).
const REFRESH_SECONDS = Number(new URLSearchParams(location.search).get("refresh")) || 3;
const HEADINGS = ["Table", "Seats", "Options", "Game", ""];
const LIVE = new Set(["open", "started"]);
const STALE_CREDENTIAL = new Set(["INVALID_CREDENTIAL", "CREDENTIAL_EXPIRED_OR_REVOKED"]);

function newRequestId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// A refusal of the page's own, shown as the server's are.
const refusal = (reason, message) => ({ reason, code: "failed_precondition", message });

export class Lobby {
  constructor(api, element, { openGame }) {
    Object.assign(this, { api, element, openGame });
    this.$ = (selector) => element.querySelector(selector);
    this.watched = new Map(); // table id -> PlayerTable, from WatchPlayer
    this.stored = new Map(); // table id -> Table, for this browser's seats and hosted tables
    this.open = []; // the open tables
    this.requestIds = new Map(); // a request's JSON -> its id, until it succeeds
    this.watch = null;
    this.timer = null;
    this.onShown = () => document.visibilityState === "visible" && this.refresh();
    this.#wireForms();
  }

  run() {
    this.#showPlayer();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), REFRESH_SECONDS * 1000);
    document.addEventListener("visibilitychange", this.onShown);
  }

  stop() {
    clearInterval(this.timer);
    document.removeEventListener("visibilitychange", this.onShown);
    if (this.watch) this.watch.stop();
  }

  // --- the player

  #wireForms() {
    const register = this.$("#register-form");
    register.addEventListener("submit", (event) => {
      event.preventDefault();
      this.register(register.name.value.trim());
    });
    this.$("[data-control='forget']").addEventListener("click", () => {
      credentials.forgetPlayerAndTables();
      this.stored.clear();
      this.#showPlayer();
    });
    const create = this.$("#create-form");
    wireClock(create);
    create.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create(create);
    });
  }

  #showPlayer() {
    const player = credentials.player();
    this.$("#register-form").hidden = Boolean(player);
    this.$("#registered").hidden = !player;
    this.$("#player-name").textContent = player ? player.name : "";
    if (this.watch) this.watch.stop();
    this.watch = null;
    this.watched.clear();
    if (player) {
      this.watch = new PlayerWatch(this.api, player.credential, {
        onTables: (tables) => {
          this.watched = new Map(tables.map((t) => [t.table.tableId, t]));
          this.render();
        },
        onStatus: (text) => {
          this.$("#player-connection").textContent = text === "watching" ? "" : `(${text})`;
        },
        onError: (error) => this.#watchRefused(error),
      });
      this.watch.run();
    }
    this.render();
  }

  // A credential the server no longer knows (another system's, expired, revoked) is
  // forgotten: the player gives their name again.
  #watchRefused(error) {
    if (STALE_CREDENTIAL.has(error.reason)) {
      credentials.forgetPlayer();
      this.#showPlayer();
    }
    showError(error);
  }

  async register(name) {
    const player = await this.#send("RegisterPlayer", { displayName: name });
    if (!player) return;
    credentials.setPlayer({ playerId: player.playerId, credential: player.credential, name });
    this.#showPlayer();
  }

  // --- reading the tables

  async refresh() {
    try {
      const listed = await this.api.call("LobbyService/ListTables", {
        status: "TABLE_STATUS_OPEN",
        pageSize: 50,
      });
      this.open = listed.tables || [];
    } catch (error) {
      showError(error);
    }
    await Promise.all(this.#ownTableIds().map((id) => this.#readOwn(id)));
    this.render();
  }

  // This browser's tables not (or not yet) on the player's stream and not known to be over.
  #ownTableIds() {
    const ids = new Set([...credentials.seatedTables(), ...credentials.hostedTables()]);
    return [...ids].filter((id) => {
      const known = this.stored.get(id);
      return !this.watched.has(id) && !(known && !LIVE.has(statusOf(known)));
    });
  }

  async #readOwn(tableId) {
    try {
      this.stored.set(tableId, await this.api.call("LobbyService/GetTable", { tableId }));
    } catch (error) {
      if (error.reason === "TABLE_NOT_FOUND") {
        credentials.forgetSeat(tableId);
        this.stored.delete(tableId);
      }
    }
  }

  // --- showing them

  // The player's live tables: from the stream where it has them, else as last read.
  #yourGames() {
    const games = new Map();
    for (const [id, table] of this.stored) {
      const seat = credentials.seat(id);
      const mine = { table, seat: seat ? seat.seat : 0 };
      mine.yourTurn = statusOf(table) === "started" && actingSeats(table).includes(mine.seat);
      if (LIVE.has(statusOf(table)) && (seat || credentials.hostToken(id))) games.set(id, mine);
    }
    for (const [id, watched] of this.watched)
      games.set(id, { table: watched.table, seat: watched.seat, yourTurn: Boolean(watched.yourTurn) });
    return [...games.values()];
  }

  render() {
    const yours = this.#yourGames();
    const yourRows = yours.map(({ table, seat, yourTurn }) =>
      tableRow(table, { mySeat: seat, yourTurn, controls: this.#ownControls(table, seat) }),
    );
    this.$("#your-games .rows").replaceChildren(
      tableOf(yourRows, {
        empty: "No games yet: join an open table or create one.",
        headings: HEADINGS,
      }),
    );
    const openRows = this.open.map((table) => {
      const seat = credentials.seat(table.tableId);
      return tableRow(table, { mySeat: seat ? seat.seat : 0, controls: this.#openControls(table) });
    });
    this.$("#open-tables .rows").replaceChildren(
      tableOf(openRows, { empty: "No open tables: create one.", headings: HEADINGS }),
    );
  }

  #button(label, control, action, extra = {}) {
    return h(
      "button",
      {
        type: "button",
        dataset: { control, ...extra },
        onclick: async (event) => {
          event.target.disabled = true;
          await action();
          event.target.disabled = false;
        },
      },
      label,
    );
  }

  #ownControls(table, seat) {
    const id = table.tableId;
    const status = statusOf(table);
    const controls = [];
    if (status === "started")
      controls.push(this.#button(seat ? "Open the board" : "Watch", "open", () => this.#open(id, seat)));
    if (status !== "open") return controls;
    const held = seat && table.seats.find((s) => s.number === seat);
    if (held) {
      const ready = Boolean(held.ready);
      controls.push(
        this.#button(ready ? "Not ready" : "Ready", "ready", () => this.setReady(id, !ready), {
          ready: ready ? "yes" : "no",
        }),
        this.#button("Leave", "leave", () => this.leave(id)),
      );
    }
    if (credentials.hostToken(id)) controls.push(this.#button("Start", "start", () => this.start(id)));
    return controls;
  }

  #openControls(table) {
    if (credentials.seat(table.tableId)) return [h("span", { class: "idle" }, "you sit here")];
    if (!(table.seats || []).some((s) => !s.taken)) return [];
    return [this.#button("Join", "join", () => this.join(table.tableId))];
  }

  // --- acting

  // One call with a request id that makes a retry of the same request safe; the answer, or
  // null once its refusal is shown.
  async #send(method, request, token = "") {
    clearError();
    const purpose = `${method} ${JSON.stringify(request)}`;
    if (!this.requestIds.has(purpose)) this.requestIds.set(purpose, newRequestId());
    try {
      const answer = await this.api.call(
        `LobbyService/${method}`,
        { ...request, requestId: this.requestIds.get(purpose) },
        { token },
      );
      this.requestIds.delete(purpose);
      return answer;
    } catch (error) {
      showError(error);
      return null;
    }
  }

  async #call(method, request, token) {
    clearError();
    try {
      return await this.api.call(`LobbyService/${method}`, request, { token });
    } catch (error) {
      showError(error);
      return null;
    }
  }

  #registered() {
    const player = credentials.player();
    if (!player) {
      showError(refusal("NAME_REQUIRED", "give your name first (Register, at the top)"));
      this.$("#register-form").name.focus();
    }
    return player;
  }

  async create(form) {
    const player = this.#registered();
    if (!player) return;
    const created = await this.#send("CreateTable", createRequest(form));
    if (!created) return;
    const id = created.table.tableId;
    credentials.setHostToken(id, created.hostToken);
    this.stored.set(id, created.table);
    form.display_name.value = ""; // the options stay, for the next table like it
    if (form.sit.checked) await this.join(id);
    else await this.refresh();
  }

  async join(tableId) {
    const player = this.#registered();
    if (!player) return;
    const joined = await this.#send("JoinTable", { tableId, playerName: player.name }, player.credential);
    if (joined) {
      credentials.setSeat(tableId, joined.seat, joined.seatToken);
      this.stored.set(tableId, joined.table);
    }
    await this.refresh();
  }

  async setReady(tableId, ready) {
    const seat = credentials.seat(tableId);
    const table = await this.#call("SetReady", { tableId, ready }, seat && seat.token);
    if (table) this.stored.set(tableId, table);
    await this.refresh();
  }

  async leave(tableId) {
    const seat = credentials.seat(tableId);
    const table = await this.#call("LeaveTable", { tableId }, seat && seat.token);
    if (table) {
      credentials.forgetSeat(tableId);
      this.stored.set(tableId, table);
    }
    await this.refresh();
  }

  async start(tableId) {
    const started = await this.#call("StartTable", { tableId }, credentials.hostToken(tableId));
    if (started) this.stored.set(tableId, started.table);
    await this.refresh();
  }

  // A seat the player's stream knows of but this browser holds no token for (a tournament's
  // table, a seat taken from another browser) is played with the player's credential.
  #open(tableId, seat) {
    const player = credentials.player();
    if (seat && !credentials.seat(tableId) && player) credentials.setSeat(tableId, seat, player.credential);
    this.openGame(tableId);
  }
}
