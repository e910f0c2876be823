// The host console's side panels: the tournament's rounds, its standings and how its players'
// turn notifications fared. Each is drawn whole from one message of the public API.
import { h, yen } from "./html.js";

const FORMATS = {
  NOTIFICATION_FORMAT_GENERIC: "generic",
  NOTIFICATION_FORMAT_SLACK: "Slack",
  NOTIFICATION_FORMAT_DISCORD: "Discord",
};

function head(...titles) {
  return h("thead", {}, h("tr", {}, titles.map((t) => h("th", {}, t))));
}

export function renderRounds(element, tournament) {
  const rounds = tournament.rounds || [];
  const rows = rounds.map((round) => {
    const tables = round.tables || [];
    const recorded = tables.filter((t) => t.endReason).length;
    return h(
      "tr",
      { dataset: { round: round.number, finished: round.finished ? "yes" : "no" } },
      h("td", {}, round.number),
      h("td", {}, tables.length),
      h("td", {}, `${recorded} of ${tables.length}`),
      h("td", {}, round.finished ? "finished" : "in progress"),
    );
  });
  const planned = Number(tournament.roundCount || 0);
  for (let number = rounds.length + 1; number <= planned; number++) {
    rows.push(h("tr", { dataset: { round: number, finished: "no" } }, h("td", {}, number), h("td", { colspan: 3 }, "to come")));
  }
  element.replaceChildren(head("Round", "Tables", "Results", ""), h("tbody", {}, rows));
}

export function renderStandings(element, standings) {
  const rows = (standings || []).map((s) =>
    h(
      "tr",
      { dataset: { playerId: s.playerId } },
      h("td", {}, s.position),
      h("td", { title: s.playerId }, s.displayName || s.playerId),
      h("td", { class: "points" }, Number(s.points || 0)),
      h("td", {}, yen(s.netWorth)),
      h("td", {}, s.games || 0),
    ),
  );
  element.replaceChildren(head("#", "Player", "Points", "Net worth", "Games"), h("tbody", {}, rows));
}

export function renderNotifications(element, health) {
  const rows = (health.players || []).map((p) =>
    h(
      "tr",
      { dataset: { playerId: p.playerId }, class: Number(p.givenUp || 0) || p.lastError ? "failing" : "" },
      h("td", {}, p.displayName || p.playerId),
      h("td", {}, p.hasTarget ? FORMATS[p.format] || "generic" : "none"),
      h("td", {}, p.delivered || 0),
      h("td", {}, p.failedAttempts || 0),
      h("td", {}, p.givenUp || 0),
      h(
        "td",
        {},
        p.lastError || "",
        p.lastErrorAtMs && Number(p.lastErrorAtMs) ? ` (${new Date(Number(p.lastErrorAtMs)).toLocaleTimeString()})` : "",
      ),
    ),
  );
  element.replaceChildren(head("Player", "Webhook", "Sent", "Failed", "Given up", "Last error"), h("tbody", {}, rows));
}
