// The lobby's rows of tables, in words: a table's name, seats, options and game, and the
// controls a row offers (made by the caller, who knows which credentials this browser holds).
import { h } from "./html.js";

const STATUS = {
  TABLE_STATUS_OPEN: "open",
  TABLE_STATUS_STARTED: "started",
  TABLE_STATUS_FINISHED: "finished",
  TABLE_STATUS_ABANDONED: "abandoned",
};

export const statusOf = (table) => STATUS[table.status] || "open";

export function optionsText(options = {}) {
  const parts = [options.rulesProfile === "18xx.games" ? "18xx.games rules" : "rulebook rules"];
  if (options.beginnerGame) parts.push("beginner game");
  if (options.fixedSeatOrder) parts.push("fixed seat order");
  if (options.undoAllowed) parts.push("undo allowed");
  if (options.closedToSpectators) parts.push("no spectators");
  else if (options.spectatorDelayActions)
    parts.push(`spectators ${options.spectatorDelayActions} actions behind`);
  const clock = options.clock;
  if (clock && clock.bankSeconds) {
    const policy = clock.policy === "CLOCK_POLICY_FORFEIT" ? "forfeit" : "flag";
    parts.push(`clock ${minutes(clock.bankSeconds)} + ${clock.incrementSeconds || 0} s (${policy})`);
  }
  return parts.join(" · ");
}

function minutes(seconds) {
  return seconds % 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds / 60} min`;
}

const seatName = (table, number) => {
  const seat = (table.seats || []).find((s) => s.number === number);
  return seat && seat.playerName ? seat.playerName : `seat ${number}`;
};

export const actingSeats = (table) => (table.game && table.game.actingSeats) || [];

function seatList(table, mySeat) {
  return h(
    "ul",
    { class: "seats" },
    (table.seats || []).map((seat) =>
      h(
        "li",
        {
          class: [seat.taken ? "taken" : "free", seat.number === mySeat ? "mine" : ""].join(" "),
          dataset: { seat: seat.number, ready: seat.ready ? "yes" : "no" },
        },
        `${seat.number}: `,
        seat.taken ? seat.playerName || "taken" : "free",
        seat.taken && statusOf(table) === "open" ? (seat.ready ? " ✓ ready" : " (not ready)") : "",
        seat.ranOut ? ` (${seat.ranOut})` : "",
      ),
    ),
  );
}

export function gameText(table) {
  const status = statusOf(table);
  if (status === "open") {
    const free = (table.seats || []).filter((s) => !s.taken).length;
    return free ? `waiting for ${free} more` : "waiting for everyone to be ready";
  }
  if (status !== "started") return status;
  if (!table.game) return "starting";
  const acting = actingSeats(table);
  const round = (table.game.round || "").replace(/_/g, " ");
  const who = acting.map((n) => seatName(table, n)).join(", ");
  return `${round}${table.game.phase ? `, phase ${table.game.phase}` : ""}: ${who || "nobody"} to act`;
}

// One table as a row: `mySeat` (0 for none) is marked, `yourTurn` (undefined: not shown) and
// `controls` (buttons) are the caller's.
export function tableRow(table, { mySeat = 0, yourTurn, controls = [] } = {}) {
  const dataset = {
    tableId: table.tableId,
    status: statusOf(table),
    actingSeats: actingSeats(table).join(","),
  };
  if (mySeat) dataset.seat = mySeat;
  if (yourTurn !== undefined) dataset.yourTurn = yourTurn ? "yes" : "no";
  return h(
    "tr",
    { dataset, class: yourTurn ? "your-turn" : "" },
    h(
      "td",
      { class: "name" },
      h("strong", {}, table.displayName || "Unnamed table"),
      h("small", {}, table.tableId),
    ),
    h("td", {}, seatList(table, mySeat)),
    h("td", { class: "options" }, optionsText(table.options)),
    h(
      "td",
      { class: "game" },
      yourTurn ? h("strong", { class: "turn" }, "Your turn. ") : "",
      mySeat ? `You are seat ${mySeat}. ` : "",
      gameText(table),
    ),
    h("td", { class: "controls" }, controls),
  );
}

export function tableOf(rows, { empty, headings }) {
  if (!rows.length) return h("p", { class: "idle" }, empty);
  return h(
    "table",
    { class: "tables" },
    h("thead", {}, h("tr", {}, headings.map((text) => h("th", {}, text)))),
    h("tbody", {}, rows),
  );
}
