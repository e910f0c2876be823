// Routes drawn by hand: one route per train of the operating corporation, built by clicking
// the hexes it visits in order (clicking the last one again takes it back). After each change
// every drawn route is checked with RoutesService.CheckRoutes, which prices them as RunRoutes
// would: each route's revenue and the total, or the rule broken, where, and by which train.
import { h, yen } from "./html.js";
import { TRAIN_COLOURS } from "./colours.js";

const colourOf = (slot) => TRAIN_COLOURS[slot % TRAIN_COLOURS.length];

// A checked set of routes, as one string: which answer belongs to which drawing.
const keyOf = (runs) => runs.map((r) => `${r.train}:${r.hexes.join(" ")}`).join(";");

export function describeViolation(error) {
  const where = error.metadata?.hex || error.metadata?.node || "";
  const train = error.metadata?.train || "";
  return `${error.reason || error.code}${where ? ` at ${where}` : ""}${train ? ` (train ${train})` : ""}`;
}

export class RouteBuilder {
  // trains: the corporation's train names, in the order RunRoutes matches them; start: routes
  // ({train, hexes}) to begin with, e.g. the best ones found.
  // onChange: the panel is to be drawn again; onEdit: the player changed a route.
  constructor({ api, gameId, token, map, trains, start = [], onChange, onEdit = () => {} }) {
    Object.assign(this, { api, gameId, token, map, trains, onChange, onEdit });
    this.routes = trains.map(() => []);
    const free = trains.map((name, slot) => ({ name, slot }));
    for (const route of start) {
      const at = free.findIndex((t) => t.name === route.train);
      if (at < 0) continue;
      this.routes[free[at].slot] = [...(route.hexes || [])];
      free.splice(at, 1);
    }
    this.active = 0;
    this.check = { state: "idle", key: "", revenue: 0, revenues: new Map(), error: null };
    this.sequence = 0;
  }

  // The drawn routes as RunRoutes takes them, with each one's train slot.
  runs() {
    return this.routes
      .map((hexes, slot) => ({ train: this.trains[slot], hexes, slot }))
      .filter((r) => r.hexes.length);
  }

  choose(slot) {
    this.active = slot;
    this.onChange();
  }

  // A hex of the map was clicked: the active train's route goes on to it, or, when it is the
  // route's last hex, steps back from it.
  click(hex) {
    const route = this.routes[this.active];
    if (route[route.length - 1] === hex) route.pop();
    else route.push(hex);
    this.onEdit();
    this.#changed();
  }

  clear() {
    this.routes[this.active] = [];
    this.onEdit();
    this.#changed();
  }

  // Draws the routes on the map (the offending train's dashed) and the panel.
  show() {
    const failing = this.check.error?.metadata?.train;
    this.map.showRoutes(
      this.runs().map((r) => ({
        ...r,
        colour: colourOf(r.slot),
        revenue: this.check.revenues.get(r.slot) || 0,
        broken: Boolean(failing) && failing === r.train,
      })),
    );
  }

  start() {
    this.map.setRouteDrawing(true);
    this.#changed();
  }

  stop() {
    this.sequence += 1;
    this.map.setRouteDrawing(false);
    this.map.clearRoutes();
  }

  #changed() {
    this.show();
    this.onChange();
    this.#recheck();
  }

  async #recheck() {
    const runs = this.runs();
    const key = keyOf(runs);
    const sequence = ++this.sequence;
    if (!runs.length) {
      this.check = { state: "checked", key, revenue: 0, revenues: new Map(), error: null };
      this.show();
      this.onChange();
      return;
    }
    this.check = { ...this.check, state: "checking", key };
    this.onChange();
    let check;
    try {
      const answer = await this.api.call(
        "RoutesService/CheckRoutes",
        { gameId: this.gameId, routes: runs.map(({ train, hexes }) => ({ train, hexes })) },
        { token: this.token },
      );
      const revenues = new Map(runs.map((r, i) => [r.slot, (answer.routes || [])[i]?.revenue || 0]));
      check = { state: "checked", key, revenue: answer.revenue || 0, revenues, error: null };
    } catch (error) {
      check = { state: "checked", key, revenue: 0, revenues: new Map(), error };
    }
    if (sequence !== this.sequence) return; // a later drawing is being checked
    this.check = check;
    this.show();
    this.onChange();
  }

  // The train buttons, the check's answer and the clear button.
  element() {
    const runs = this.runs();
    const trains = h(
      "div",
      { class: "route-trains" },
      this.trains.map((name, slot) => {
        const hexes = this.routes[slot];
        const revenue = this.check.revenues.get(slot);
        return h(
          "button",
          {
            type: "button",
            class: `route-train${slot === this.active ? " chosen" : ""}`,
            style: `--train-colour: ${colourOf(slot)}`,
            dataset: {
              control: "route-train",
              train: name,
              slot,
              hexes: hexes.join(" "),
              ...(revenue !== undefined && hexes.length ? { revenue } : {}),
            },
            onclick: () => this.choose(slot),
          },
          h("span", { class: "swatch" }),
          `${name}-train`,
          hexes.length ? `: ${hexes.join(" – ")}` : ": no route",
          revenue !== undefined && hexes.length ? ` — ${yen(revenue)}` : "",
        );
      }),
    );
    const { error } = this.check;
    const result = h("p", {
      id: "route-check",
      class: error ? "refused" : "",
      dataset: { state: this.check.state, routes: this.check.key },
    });
    if (this.check.state === "checking") {
      result.append("Checking…");
    } else if (error) {
      Object.assign(result.dataset, {
        reason: error.reason || error.code || "ERROR",
        train: error.metadata?.train || "",
        hex: error.metadata?.hex || "",
        node: error.metadata?.node || "",
      });
      result.append(h("strong", {}, describeViolation(error)), h("small", {}, error.message));
    } else {
      result.dataset.revenue = this.check.revenue;
      result.append(
        runs.length
          ? `Revenue ${yen(this.check.revenue)}`
          : "Click the hexes of a route on the map, in order, from one end to the other.",
      );
    }
    return [
      h(
        "p",
        { class: "hint" },
        "Choose a train, then click its route's hexes on the map in order; " +
          "click the last one again to take it back.",
      ),
      trains,
      result,
      h(
        "button",
        {
          type: "button",
          dataset: { control: "route-clear" },
          disabled: !this.routes[this.active].length,
          onclick: () => this.clear(),
        },
        `Clear the ${this.trains[this.active]}-train's route`,
      ),
    ];
  }
}
