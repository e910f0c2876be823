// The tables beside the map: the phase and round and who acts, the players (cash,
// certificates, privates), the corporations (treasury, trains, tokens, shares), the bank and
// the depot. Everything is read from the state document (GameState.state).
import { corporationColour } from "./colours.js";
import { h, yen } from "./html.js";

export function seatName(state, seat) {
  const player = (state.players || []).find((p) => p.seat === seat);
  return player ? `${player.name} (seat ${seat})` : `seat ${seat}`;
}

export function roundText(round) {
  if (!round) return "–";
  switch (round.type) {
    case "private_auction":
      return round.closed_auction
        ? `private auction: closed auction of ${round.closed_auction.company}`
        : "private auction";
    case "stock_round":
      return `stock round ${round.number}`;
    case "operating_round": {
      const step = round.step ? ` (${round.step} step)` : "";
      const who = round.operating ? `, ${round.operating} operating${step}` : "";
      return `operating round ${round.number} of ${round.of}${who}`;
    }
    default:
      return round.type.replaceAll("_", " ");
  }
}

// How many of a train are left: the unlimited Diesels are sent as -1 (docs/api.md).
export function depotText(depot) {
  return (
    Object.entries(depot || {})
      .map(([train, left]) => `${train} ×${Number(left) < 0 ? "∞" : left}`)
      .join(", ") || "empty"
  );
}

const END_REASONS = {
  bankrupt: "a player went bankrupt",
  bank: "the bank broke",
  ended: "ended by the players' agreement",
};

// The finished game's ranking: by net worth, equal net worths sharing a place.
export function ranking(result) {
  const worths = [...(result.net_worths || [])].sort((a, b) => b.net_worth - a.net_worth);
  return worths.map((n) => ({
    ...n,
    place: 1 + worths.filter((other) => other.net_worth > n.net_worth).length,
  }));
}

function resultList(state) {
  return h(
    "ol",
    { id: "ranking" },
    ranking(state.result).map((n) =>
      h(
        "li",
        { dataset: { seat: n.seat, place: n.place, netWorth: n.net_worth } },
        `${n.place}. ${seatName(state, n.seat)} ${yen(n.net_worth)}`,
      ),
    ),
  );
}

export function renderStatus(element, gameState, title) {
  const state = gameState.state || {};
  const acting = (gameState.actingSeats || []).map((seat) => seatName(state, seat));
  const phase = (title.phases || []).find((p) => p.name === state.phase);
  const result = state.result;
  // A finished game has no round: the status says how it ended and who won.
  const progress = result
    ? [
        h("dt", {}, "Result"),
        h(
          "dd",
          { id: "game-over", dataset: { reason: result.reason } },
          `game over: ${END_REASONS[result.reason] || result.reason}`,
          resultList(state),
        ),
      ]
    : [h("dt", {}, "Round"), h("dd", { id: "round" }, roundText(state.round))];
  element.dataset.over = result ? "yes" : "no";
  element.replaceChildren(
    h("dt", {}, "Phase"),
    h(
      "dd",
      { id: "phase" },
      phase
        ? `${state.phase} (train limit ${phase.trainLimit}, ${(phase.tiles || []).join("/")} tiles)`
        : (state.phase ?? "–"),
    ),
    ...progress,
    h("dt", {}, "Acting"),
    h(
      "dd",
      { id: "acting", dataset: { seats: (gameState.actingSeats || []).join(" ") } },
      acting.join(", ") || "nobody",
    ),
    h("dt", {}, "Bank"),
    h("dd", { id: "bank" }, `${yen(state.bank)}${state.bank_broken ? " (broken)" : ""}`),
    h("dt", {}, "Depot"),
    h(
      "dd",
      { id: "depot" },
      depotText(state.depot),
      (state.open_market_trains || []).length ? `; open market: ${state.open_market_trains.join(", ")}` : "",
    ),
  );
}

function corporationBadge(id) {
  const colour = corporationColour(id);
  return h("span", { class: "badge", style: `background:${colour.fill};color:${colour.text}` }, id);
}

export function renderPlayers(element, gameState) {
  const state = gameState.state || {};
  const acting = new Set(gameState.actingSeats || []);
  const rows = (state.players || []).map((player) =>
    h(
      "tr",
      { dataset: { seat: player.seat }, class: acting.has(player.seat) ? "acting" : "" },
      h("td", {}, player.seat, state.priority_deal === player.seat ? " ★" : ""),
      h("td", {}, player.name),
      h("td", { class: "cash" }, yen(player.cash)),
      h(
        "td",
        { class: "certificates" },
        Object.entries(player.shares || {}).map(([id, count]) => {
          const president = (state.corporations || []).find((c) => c.id === id)?.president === player.seat;
          return h(
            "span",
            { class: "holding" },
            corporationBadge(id),
            ` ${count * 10}%${president ? " P" : ""} `,
          );
        }),
      ),
      h("td", { class: "privates" }, (player.privates || []).join(", ")),
    ),
  );
  element.replaceChildren(
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Seat", "Player", "Cash", "Certificates", "Privates"].map((t) => h("th", {}, t)),
      ),
    ),
    h("tbody", {}, rows),
  );
}

export function renderCorporations(element, gameState, title) {
  const state = gameState.state || {};
  const operating = state.round && state.round.operating;
  const charters = new Map((title.corporations || []).map((c) => [c.id, c]));
  const rows = (state.corporations || []).map((corporation) => {
    const charter = charters.get(corporation.id) || { tokenCosts: [] };
    const tokens = (charter.tokenCosts || []).length;
    // Kept narrow enough for the side column at 1400 px: the name, "floated" and the privates
    // it owns with the badge, the par under the price, counts as "a/b".
    return h(
      "tr",
      {
        dataset: { corporation: corporation.id, floated: corporation.floated ? "yes" : "no" },
        class: corporation.id === operating ? "acting" : "",
      },
      h(
        "td",
        { title: charter.name || "" },
        corporationBadge(corporation.id),
        corporation.floated ? h("small", { class: "floated" }, " floated") : "",
        h("small", { class: "name" }, charter.name || ""),
        (corporation.privates || []).length
          ? h("small", { class: "privates" }, `owns ${corporation.privates.join(", ")}`)
          : "",
      ),
      h("td", { class: "president" }, corporation.president ? `seat ${corporation.president}` : "–"),
      h(
        "td",
        { class: "share" },
        corporation.share_price ? yen(corporation.share_price) : "–",
        corporation.par ? h("small", { class: "par" }, `par ${corporation.par}`) : "",
      ),
      h("td", { class: "treasury" }, yen(corporation.cash)),
      h("td", { class: "trains" }, (corporation.trains || []).join(" ") || "–"),
      h("td", { class: "tokens" }, `${corporation.tokens_placed || 0}/${tokens}`),
      h("td", { class: "shares" }, `${corporation.initial_offering ?? 0}/${corporation.open_market ?? 0}`),
    );
  });
  const headings = [
    ["Corporation", ""],
    ["Pres.", "President"],
    ["Share", "Share price and par"],
    ["Treasury", ""],
    ["Trains", ""],
    ["Tokens", "Tokens placed / total"],
    ["IPO/mkt", "Shares in the initial offering / the open market"],
  ];
  element.replaceChildren(
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headings.map(([label, title]) => h("th", { title: title || undefined }, label)),
      ),
    ),
    h("tbody", {}, rows),
  );
}
