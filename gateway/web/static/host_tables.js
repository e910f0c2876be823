// The tables of a tournament's current round, one card each: where its game stands (from the
// table's GameSummary), whose turn it is, each seat's clock counting down from the moment the
// server measured it (SeatClock.as_of_ms), a table that has not moved for a while highlighted
// (GameSummary.moved_at_ms), and the host's controls for it. Cards change only when the
// tournament's stream brings a table; `tick` moves the clocks and the stall marks between.
import { corporationColour } from "./colours.js";
import { h, yen } from "./html.js";

const LIVE = "TABLE_STATUS_STARTED";
const STATUS_WORDS = {
  TABLE_STATUS_OPEN: "open",
  TABLE_STATUS_STARTED: "live",
  TABLE_STATUS_FINISHED: "finished",
  TABLE_STATUS_ABANDONED: "abandoned",
};

export function summaryText(game) {
  if (!game || !game.round) return "not summarised yet";
  switch (game.round) {
    case "private_auction":
      return "private auction";
    case "stock_round":
      return `stock round ${game.roundNumber || ""}`.trim();
    case "operating_round":
      return `operating round ${game.roundNumber || ""}`.trim();
    default:
      return game.round.replaceAll("_", " ");
  }
}

export function clockText(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const [hours, minutes] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60];
  const two = (n) => String(n).padStart(2, "0");
  return hours ? `${hours}:${two(minutes)}:${two(seconds % 60)}` : `${minutes}:${two(seconds % 60)}`;
}

export function agoText(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor(seconds / 60) % 60} min ago`;
}

// What a seat's clock shows at `now` (server time): it falls in real time while it runs.
export function remainingAt(clock, now) {
  const remaining = Number(clock.remainingMs || 0);
  return clock.running ? Math.max(0, remaining - (now - Number(clock.asOfMs || 0))) : remaining;
}

function seatLabel(table, number) {
  const seat = (table.seats || []).find((s) => s.number === number);
  return seat && seat.playerName ? `${seat.playerName} (seat ${number})` : `seat ${number}`;
}

function operatingBadge(id) {
  const colour = corporationColour(id);
  return h("span", { class: "badge", style: `background:${colour.fill};color:${colour.text}` }, id);
}

export class TableBoard {
  // `controls`: onEnd(table), onForfeit(table, seat), onReplace(table, seat, playerId),
  // boardLink(gameId) -> the board page's address for that game.
  constructor(element, controls) {
    this.element = element;
    this.controls = controls;
    this.tables = new Map(); // table id -> the latest Table the stream brought
    this.cards = new Map(); // table id -> its card
    this.round = null; // the TournamentRound shown
    this.names = new Map(); // player id -> display name
  }

  // Shows the tables of `round` (a TournamentRound), in its order.
  showRound(round, names) {
    this.round = round;
    this.names = names;
    const wanted = (round ? round.tables : []) || [];
    const ids = new Set(wanted.map((t) => t.tableId));
    for (const id of [...this.cards.keys()]) if (!ids.has(id)) this.cards.delete(id);
    for (const id of [...this.tables.keys()]) if (!ids.has(id)) this.tables.delete(id);
    const cards = wanted.map((entry, index) => {
      const card = this.cards.get(entry.tableId) || h("article", { class: "table-card" });
      this.cards.set(entry.tableId, card);
      this.render(card, entry, index + 1);
      return card;
    });
    this.element.replaceChildren(
      ...(cards.length ? cards : [h("p", { class: "idle" }, "No round has started yet.")]),
    );
  }

  // A table as it now stands; one of another round than the one shown is not ours to show.
  // The answer to a host's command may come without the game's summary: the last one stays.
  update(table) {
    const card = this.cards.get(table.tableId);
    if (!card) return;
    const known = this.tables.get(table.tableId);
    if (known) {
      const version = (t) => Number((t.game && t.game.version) || 0);
      if (table.game && version(known) > version(table)) return; // an older picture, sent before
      if (known.status !== LIVE && table.status === LIVE) return; // a table never starts again
      if (!table.game && known.game) table = { ...table, game: known.game };
    }
    this.tables.set(table.tableId, table);
    const entries = (this.round && this.round.tables) || [];
    const index = entries.findIndex((t) => t.tableId === table.tableId);
    this.render(card, entries[index], index + 1);
  }

  // A table as a listing has it, shown only until the stream brings that table.
  fill(table) {
    if (!this.tables.has(table.tableId)) this.update(table);
  }

  missing() {
    return [...this.cards.keys()].filter((id) => !this.tables.has(id));
  }

  render(card, entry, number) {
    const table = this.tables.get(entry.tableId);
    const game = (table && table.game) || {};
    const status = table ? table.status : "";
    const acting = new Set(game.actingSeats || []);
    card.dataset.tableId = entry.tableId;
    card.dataset.status = STATUS_WORDS[status] || "waiting";
    card.dataset.version = game.version || "0";
    card.dataset.acting = (game.actingSeats || []).join(" ");
    card.dataset.movedAtMs = game.movedAtMs || "";
    card.classList.toggle("finished", status !== LIVE && Boolean(table));
    const live = status === LIVE;
    const link = table && table.gameId ? this.controls.boardLink(table.gameId) : "";
    card.replaceChildren(
      h(
        "header",
        {},
        h("h3", { title: (table && table.displayName) || "" }, `Table ${number}`),
        h("code", { class: "table-id" }, entry.tableId),
        link ? h("a", { href: link, target: "_blank", rel: "noopener" }, "board") : null,
        h("span", { class: "state" }, this.stateText(table)),
      ),
      h(
        "dl",
        { class: "game" },
        h("dt", {}, "Round"),
        h("dd", { class: "round" }, summaryText(game), game.operating ? " " : "", game.operating ? operatingBadge(game.operating) : ""),
        h("dt", {}, "Phase"),
        h("dd", { class: "phase" }, game.phase || "–"),
        h("dt", {}, "Acting"),
        h(
          "dd",
          { class: "acting" },
          game.finished ? "nobody (game over)" : [...acting].map((s) => seatLabel(table, s)).join(", ") || "–",
        ),
        h("dt", {}, "Last move"),
        h("dd", { class: "moved" }, game.movedAtMs ? "" : "–"),
      ),
      this.seatsTable(entry, table, acting),
      live ? this.hostControls(table) : null,
    );
    this.tickCard(card, this.now || Date.now(), this.stallMs || Infinity);
  }

  stateText(table) {
    if (!table) return "waiting for the server";
    const game = table.game || {};
    if (table.status === LIVE) return "live";
    const reason = game.endReason ? ` (${game.endReason})` : "";
    return `${STATUS_WORDS[table.status] || table.status}${reason}`;
  }

  seatsTable(entry, table, acting) {
    const seats = table ? table.seats || [] : (entry.playerIds || []).map((id, i) => ({ number: i + 1, playerName: this.names.get(id) || id }));
    const worths = (table && table.game && table.game.netWorths) || {};
    const finished = Boolean(table && table.game && table.game.finished);
    const live = table && table.status === LIVE;
    const rows = seats.map((seat) => {
      const clock = seat.clock;
      const flagged = seat.ranOut === "flagged";
      return h(
        "tr",
        { dataset: { seat: seat.number, ranOut: seat.ranOut || "" }, class: acting.has(seat.number) ? "acting" : "" },
        h("td", {}, seat.number),
        h("td", { class: "player" }, seat.playerName || "–"),
        h(
          "td",
          clock
            ? {
                class: `clock${clock.running ? " running" : ""}`,
                dataset: { remainingMs: clock.remainingMs || "0", asOfMs: clock.asOfMs || "0", running: clock.running ? "yes" : "no" },
              }
            : { class: "clock" },
          clock ? clockText(Number(clock.remainingMs || 0)) : "–",
        ),
        h(
          "td",
          { class: "seat-state" },
          seat.ranOut ? h("span", { class: `ran-out ${seat.ranOut}` }, seat.ranOut) : "",
          live && flagged
            ? h("button", { class: "forfeit", type: "button", onclick: () => this.controls.onForfeit(table, seat.number) }, "Forfeit")
            : null,
          finished && worths[seat.number] !== undefined ? yen(worths[seat.number]) : "",
        ),
      );
    });
    return h(
      "table",
      { class: "seats" },
      h("thead", {}, h("tr", {}, ["Seat", "Player", "Clock", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows),
    );
  }

  hostControls(table) {
    const seat = h(
      "select",
      { name: "seat" },
      (table.seats || []).filter((s) => s.taken).map((s) => h("option", { value: String(s.number) }, `seat ${s.number}`)),
    );
    const player = h("input", { name: "player", placeholder: "player id p-…", size: 14, required: true });
    return h(
      "footer",
      {},
      h(
        "form",
        {
          class: "replace",
          onsubmit: (event) => {
            event.preventDefault();
            this.controls.onReplace(table, Number(seat.value), player.value.trim());
          },
        },
        "Give ",
        seat,
        " to ",
        player,
        h("button", { type: "submit" }, "Replace seat"),
      ),
      h("button", { class: "end", type: "button", onclick: () => this.controls.onEnd(table) }, "End table"),
    );
  }

  // Moves every running clock and each table's stall mark to `now` (server time).
  tick(now, stallMs) {
    this.now = now;
    this.stallMs = stallMs;
    for (const card of this.cards.values()) this.tickCard(card, now, stallMs);
  }

  tickCard(card, now, stallMs) {
    for (const cell of card.querySelectorAll(".clock.running")) {
      const clock = { remainingMs: cell.dataset.remainingMs, asOfMs: cell.dataset.asOfMs, running: true };
      const left = remainingAt(clock, now);
      cell.textContent = clockText(left);
      cell.classList.toggle("low", left < 60_000);
    }
    const moved = Number(card.dataset.movedAtMs || 0);
    const stalled = card.dataset.status === "live" && moved > 0 && now - moved > stallMs;
    card.dataset.stalled = stalled ? "yes" : "no";
    card.classList.toggle("stalled", stalled);
    const movedCell = card.querySelector(".moved");
    if (movedCell && moved) movedCell.textContent = `${agoText(now - moved)} (version ${card.dataset.version})`;
    const state = card.querySelector(".state");
    if (state && card.dataset.status === "live") state.textContent = stalled ? `stalled: no move ${agoText(now - moved)}` : "live";
  }
}
