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

export function renderStatus(element, gameState, title) {
  const state = gameState.state || {};
  const acting = (gameState.actingSeats || []).map((seat) => seatName(state, seat));
  const phase = (title.phases || []).find((p) => p.name === state.phase);
  const result = state.result
    ? `game over (${state.result.reason}): ` +
      state.result.net_worths.map((n) => `${seatName(state, n.seat)} ${yen(n.net_worth)}`).join(", ")
    : "";
  element.replaceChildren(
    h("dt", {}, "Phase"),
    h(
      "dd",
      { id: "phase" },
      phase
        ? `${state.phase} (train limit ${phase.trainLimit}, ${(phase.tiles || []).join("/")} tiles)`
        : (state.phase ?? "–"),
    ),
    h("dt", {}, "Round"),
    h("dd", { id: "round" }, roundText(state.round)),
    h("dt", {}, "Acting"),
    h(
      "dd",
      { id: "acting", dataset: { seats: (gameState.actingSeats || []).join(" ") } },
      result || acting.join(", ") || "nobody",
    ),
    h("dt", {}, "Bank"),
    h("dd", { id: "bank" }, `${yen(state.bank)}${state.bank_broken ? " (broken)" : ""}`),
    h("dt", {}, "Depot"),
    h(
      "dd",
      { id: "depot" },
      Object.entries(state.depot || {})
        .map(([train, left]) => `${left}× ${train}`)
        .join(", ") || "empty",
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
    return h(
      "tr",
      { dataset: { corporation: corporation.id }, class: corporation.id === operating ? "acting" : "" },
      h(
        "td",
        { title: charter.name || "" },
        corporationBadge(corporation.id),
        h("small", { class: "name" }, ` ${charter.name || ""}`),
      ),
      h("td", {}, corporation.president ? `seat ${corporation.president}` : "–"),
      h(
        "td",
        {},
        corporation.share_price ? yen(corporation.share_price) : "–",
        corporation.par ? ` (par ${corporation.par})` : "",
      ),
      h("td", { class: "treasury" }, yen(corporation.cash)),
      h("td", { class: "trains" }, (corporation.trains || []).join(", ") || "–"),
      h("td", { class: "tokens" }, `${corporation.tokens_placed || 0} / ${tokens}`),
      h("td", {}, `${corporation.initial_offering ?? 0} / ${corporation.open_market ?? 0}`),
      h("td", {}, (corporation.privates || []).join(", ")),
      h("td", {}, corporation.floated ? "yes" : "no"),
    );
  });
  element.replaceChildren(
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        [
          "Corporation",
          "President",
          "Share",
          "Treasury",
          "Trains",
          "Tokens",
          "IPO / market",
          "Privates",
          "Floated",
        ].map((t) => h("th", {}, t)),
      ),
    ),
    h("tbody", {}, rows),
  );
}
