// The seat's controls: one for every legal action (ListLegalActions) of the seat, built into
// the command that option allows. Tiles are chosen as pictures (tile_picker.js) and previewed
// on the map; station tokens are placed by clicking the city; routes are the best ones found
// (RoutesService.Optimize) or drawn by hand (route_builder.js), drawn on the map before they
// are run.
import { clearError } from "./alerts.js";
import { h, yen } from "./html.js";
import { RouteBuilder } from "./route_builder.js";
import { supplyPanel, tileChoices, tilesLeft } from "./tile_picker.js";

const SOURCE_NAMES = {
  SHARE_SOURCE_INITIAL_OFFERING: "initial offering",
  SHARE_SOURCE_OPEN_MARKET: "open market",
};

function kindOf(action) {
  return Object.keys(action).find((key) => key !== "seat");
}

function commandId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

function numberInput(name, min, max, step = 1, value = min) {
  return h("input", { type: "number", name, min, max, step, value, dataset: { input: name } });
}

export class ActionPanel {
  constructor(element, { map, api, gameId, token, seat, onError, onSent }) {
    Object.assign(this, { element, map, api, gameId, token, seat, onError, onSent });
    this.actions = [];
    this.version = 0;
    this.selection = null; // { hex, tile, company, index } while a tile is being placed
    this.routes = null; // the best routes found for the run_routes option shown
    this.drawing = null; // the RouteBuilder while routes are drawn by hand
    this.supplyOpen = null; // the tile supply panel opened or closed by hand; null: by the step
    this.busy = false;
  }

  // Shows the options listed at `version` (only this seat's, when a seat is known).
  update(version, actions) {
    const mine = actions.filter((a) => !this.seat || a.seat === this.seat);
    const changed = version !== this.version;
    this.version = version;
    this.actions = mine;
    if (changed) {
      this.selection = null;
      this.routes = null;
      this.drawing?.stop();
      this.drawing = null;
      this.map.clearPreview();
      this.map.clearRoutes();
    }
    this.busy = false;
    this.render();
  }

  of(kind) {
    return this.actions.filter((a) => kindOf(a) === kind).map((a) => ({ ...a[kind], seat: a.seat }));
  }

  render() {
    const lays = this.of("layTile");
    const tokens = this.of("placeToken");
    const sections = [];
    if (lays.length) sections.push(this.#laySection(lays));
    if (tokens.length) sections.push(this.#tokenSection(tokens));
    for (const option of this.of("runRoutes")) sections.push(this.#routesSection(option));
    const buttons = this.#otherControls();
    if (buttons.length) sections.push(h("div", { class: "controls" }, buttons));
    if (!sections.length)
      sections.push(
        h(
          "p",
          { class: "idle" },
          this.token ? "Nothing to do now: waiting for the other players." : "Watching as a spectator.",
        ),
      );
    if (this.map.title.tiles?.length && this.map.state.board) {
      sections.push(
        supplyPanel({
          title: this.map.title,
          left: tilesLeft(this.map.title, this.map.state),
          open: this.supplyOpen ?? lays.length > 0,
          onToggle: (open) => {
            this.supplyOpen = open;
          },
        }),
      );
    }
    this.element.replaceChildren(...sections);
    this.element.dataset.version = this.version;
    this.element.dataset.busy = this.busy ? "yes" : "no";
    const targets = new Set([...lays.map((l) => l.hex)]);
    if (targets.size) this.map.showTargets(targets, "lay", this.selection?.hex);
    else if (tokens.length) {
      this.map.showTargets(new Set(tokens.map((t) => t.hex)), "token", this.selection?.hex);
      this.map.showTokenTargets(
        tokens.map((t) => ({ hex: t.hex, city: t.city || 0 })),
        (hex, city) => this.#placeToken(hex, city),
      );
    } else this.map.clearTargets();
    for (const control of this.element.querySelectorAll("button"))
      control.disabled = this.busy || control.disabled;
  }

  // A hex of the map was clicked: the route being drawn goes through it; a hex where a tile
  // may go is chosen, and clicking it again turns the tile previewed on it.
  selectHex(hex) {
    if (this.busy) return;
    if (this.drawing) {
      this.drawing.click(hex);
      return;
    }
    const lays = this.of("layTile").filter((l) => l.hex === hex);
    if (lays.length) {
      if (this.selection?.hex === hex && this.selection.tile) return this.#turn(1);
      this.selection = { hex, tile: "", company: "", index: 0 };
      this.#showSelection();
      this.render();
      return;
    }
    const token = this.of("placeToken").find((t) => t.hex === hex);
    if (token) {
      this.selection = { hex, token: true };
      this.render();
    }
  }

  // The lay options of the selected hex and tile (one per rotation).
  #rotations() {
    const { hex, tile, company } = this.selection;
    return this.of("layTile").filter(
      (l) => l.hex === hex && l.tile === tile && (l.company || "") === company,
    );
  }

  #turn(step) {
    const count = this.#rotations().length;
    this.selection.index = (this.selection.index + step + count) % count;
    this.#showSelection();
    this.render();
  }

  #showSelection() {
    if (!this.selection || this.selection.token || !this.selection.tile) return this.map.clearPreview();
    const option = this.#rotations()[this.selection.index];
    this.map.showPreview(option.hex, option.tile, option.rotation || 0);
  }

  #laySection(lays) {
    const section = h("section", { class: "lay", dataset: { kind: "lay-tile" } }, h("h3", {}, "Lay a tile"));
    if (!this.selection || this.selection.token) {
      const hexes = [...new Set(lays.map((l) => l.hex))];
      section.append(
        h(
          "p",
          {},
          `Choose a highlighted hex on the map (${hexes.length}): `,
          hexes.map((hex) =>
            h(
              "button",
              {
                type: "button",
                class: "link",
                dataset: { control: "hex", hex },
                onclick: () => this.selectHex(hex),
              },
              hex,
            ),
          ),
        ),
      );
      return section;
    }
    const { hex } = this.selection;
    const choices = new Map();
    for (const l of lays.filter((l) => l.hex === hex)) {
      const key = `${l.tile}|${l.company || ""}`;
      if (!choices.has(key))
        choices.set(key, { tile: l.tile, company: l.company || "", rotation: l.rotation || 0 });
    }
    const rotations = this.selection.tile ? this.#rotations() : [];
    const option = rotations[this.selection.index];
    section.append(
      h("p", {}, `Hex ${hex}: choose a tile (${choices.size})`),
      tileChoices({
        choices: [...choices.values()],
        tiles: this.map.tiles,
        left: tilesLeft(this.map.title, this.map.state),
        chosen: option && {
          tile: option.tile,
          company: option.company || "",
          rotation: option.rotation || 0,
        },
        onChoose: (choice) => {
          Object.assign(this.selection, { tile: choice.tile, company: choice.company, index: 0 });
          this.#showSelection();
          this.render();
        },
      }),
    );
    const cancel = h(
      "button",
      {
        type: "button",
        dataset: { control: "cancel" },
        onclick: () => {
          this.selection = null;
          this.map.clearPreview();
          this.render();
        },
      },
      "Cancel",
    );
    if (!option) {
      section.append(h("div", { class: "placing" }, cancel));
      return section;
    }
    const turn = (label, control, step) =>
      h(
        "button",
        {
          type: "button",
          dataset: { control },
          disabled: rotations.length < 2,
          title: "Or click the tile on the map",
          onclick: () => this.#turn(step),
        },
        label,
      );
    section.append(
      h(
        "div",
        { class: "placing" },
        turn("⟲", "rotate-back", -1),
        turn(`Rotate (${this.selection.index + 1} of ${rotations.length})`, "rotate", 1),
        h(
          "button",
          {
            type: "button",
            class: "primary",
            dataset: { control: "lay", hex, tile: option.tile, rotation: option.rotation || 0 },
            onclick: () =>
              this.submit({
                layTile: {
                  hex,
                  tile: option.tile,
                  rotation: option.rotation || 0,
                  company: option.company || "",
                },
              }),
          },
          `Lay ${option.tile} in ${hex}, rotation ${option.rotation || 0}${option.cost ? ` (${yen(option.cost)})` : ""}`,
        ),
        cancel,
      ),
    );
    return section;
  }

  #placeToken(hex, city) {
    if (this.busy) return;
    this.submit({ placeToken: { hex, city } });
  }

  #tokenSection(tokens) {
    return h(
      "section",
      { class: "token", dataset: { kind: "place-token" } },
      h("h3", {}, "Place a station token"),
      h("p", { class: "hint" }, "Click an outlined city on the map, or:"),
      tokens.map((t) =>
        h(
          "button",
          {
            type: "button",
            class: this.selection?.hex === t.hex ? "chosen" : "",
            dataset: { control: "token", hex: t.hex, city: t.city || 0 },
            onclick: () => this.#placeToken(t.hex, t.city || 0),
          },
          `Token in ${t.hex}${t.city ? ` city ${t.city}` : ""} (${yen(t.cost)})`,
        ),
      ),
    );
  }

  #routesSection(option) {
    const section = h(
      "section",
      { class: "routes", dataset: { kind: "run-routes" } },
      h("h3", {}, `Run ${option.corporation}'s trains (${(option.trains || []).join(", ")})`),
    );
    if (this.drawing) {
      const runs = this.drawing.runs();
      section.append(
        ...this.drawing.element(),
        h(
          "div",
          { class: "placing" },
          h(
            "button",
            {
              type: "button",
              class: "primary",
              dataset: { control: "run-drawn" },
              onclick: () =>
                this.submit({
                  runRoutes: { routes: runs.map(({ train, hexes }) => ({ train, hexes })) },
                }),
            },
            runs.length ? "Run these routes" : "Run no train",
          ),
          h(
            "button",
            {
              type: "button",
              dataset: { control: "stop-drawing" },
              onclick: () => {
                this.drawing.stop();
                this.drawing = null;
                if (this.routes) this.map.showRoutes(this.routes.routes || []);
                this.render();
              },
            },
            "Stop drawing",
          ),
        ),
      );
      return section;
    }
    const draw = h(
      "button",
      {
        type: "button",
        dataset: { control: "draw-routes", corporation: option.corporation },
        title: this.routes ? "Start from the best routes found" : "",
        onclick: () => this.#startDrawing(option),
      },
      this.routes ? "Change these routes by hand" : "Draw routes",
    );
    if (!this.routes) {
      section.append(
        h(
          "button",
          {
            type: "button",
            dataset: { control: "optimize", corporation: option.corporation },
            onclick: () => this.#optimize(option.corporation),
          },
          "Find the best routes",
        ),
        draw,
      );
      return section;
    }
    const routes = this.routes.routes || [];
    section.append(
      h(
        "ol",
        { class: "route-list" },
        routes.map((r) =>
          h(
            "li",
            { dataset: { train: r.train } },
            `${r.train}-train: ${(r.hexes || []).join(" – ")} — ${yen(r.revenue)}`,
          ),
        ),
      ),
      h("p", {}, `Revenue ${yen(this.routes.revenue)}${this.routes.proven ? "" : " (search cut short)"}`),
      h(
        "button",
        {
          type: "button",
          class: "primary",
          dataset: { control: "run-routes", revenue: this.routes.revenue || 0 },
          onclick: () =>
            this.submit({
              runRoutes: { routes: routes.map((r) => ({ train: r.train, hexes: r.hexes || [] })) },
            }),
        },
        "Run these routes",
      ),
      draw,
    );
    return section;
  }

  #startDrawing(option) {
    this.map.clearRoutes();
    this.drawing = new RouteBuilder({
      api: this.api,
      gameId: this.gameId,
      token: this.token,
      map: this.map,
      trains: option.trains || [],
      start: this.routes?.routes || [],
      onChange: () => this.render(),
      // A refusal of the routes as they were drawn no longer holds once they change.
      onEdit: clearError,
    });
    this.drawing.start();
  }

  async #optimize(corporation) {
    this.busy = true;
    this.render();
    try {
      this.routes = await this.api.call(
        "RoutesService/Optimize",
        { gameId: this.gameId, corporation },
        { token: this.token, timeoutMs: 10000 },
      );
      this.map.showRoutes(this.routes.routes || []);
    } catch (error) {
      this.onError(error);
    } finally {
      this.busy = false;
      this.render();
    }
  }

  #otherControls() {
    const controls = [];
    const button = (label, control, command, extra = {}) =>
      h(
        "button",
        {
          type: "button",
          dataset: { control, ...extra },
          onclick: () => this.submit(typeof command === "function" ? command() : command),
        },
        label,
      );
    for (const o of this.of("buyPrivate"))
      controls.push(
        button(
          `Buy ${o.company} for ${yen(o.price)}`,
          "buy-private",
          { buyPrivate: { company: o.company } },
          { company: o.company },
        ),
      );
    for (const o of this.of("placeBid")) {
      const price = numberInput(`bid-${o.company}`, o.minPrice, o.maxPrice, o.step || 5);
      controls.push(
        h(
          "span",
          { class: "with-input" },
          price,
          button(
            `Bid on ${o.company}`,
            "bid",
            () => ({ placeBid: { company: o.company, price: Number(price.value) } }),
            { company: o.company },
          ),
        ),
      );
    }
    for (const o of this.of("startCorporation")) {
      const par = h(
        "select",
        { dataset: { input: `par-${o.corporation}` } },
        (o.parPrices || []).map((p) => h("option", { value: p }, yen(p))),
      );
      controls.push(
        h(
          "span",
          { class: "with-input" },
          par,
          button(
            `Start ${o.corporation}`,
            "start",
            () => ({ startCorporation: { corporation: o.corporation, par: Number(par.value) } }),
            { corporation: o.corporation },
          ),
        ),
      );
    }
    for (const o of this.of("buyShare"))
      controls.push(
        button(
          `Buy ${o.corporation} from ${SOURCE_NAMES[o.source] || o.source} (${yen(o.price)})`,
          "buy-share",
          { buyShare: { corporation: o.corporation, source: o.source } },
          { corporation: o.corporation, source: o.source },
        ),
      );
    for (const o of this.of("sellShares")) {
      const count = numberInput(`sell-${o.corporation}`, 1, o.maxCount);
      controls.push(
        h(
          "span",
          { class: "with-input" },
          count,
          button(
            `Sell ${o.corporation} at ${yen(o.price)}`,
            "sell",
            () => ({ sellShares: { corporation: o.corporation, count: Number(count.value) } }),
            { corporation: o.corporation },
          ),
        ),
      );
    }
    for (const o of this.of("payDividends")) {
      controls.push(
        button(`Pay out ${yen(o.revenue)}`, "payout", { payDividends: { kind: "DIVIDEND_KIND_PAYOUT" } }),
      );
      controls.push(button("Withhold", "withhold", { payDividends: { kind: "DIVIDEND_KIND_WITHHOLD" } }));
    }
    for (const o of this.of("buyTrain")) {
      const label = `Buy a ${o.train}-train from ${o.source}${o.exchange ? ` for a ${o.exchange}` : ""}`;
      const extra = { train: o.train, source: o.source, exchange: o.exchange || "" };
      if (o.minPrice === o.maxPrice) {
        controls.push(
          button(
            `${label} (${yen(o.maxPrice)})`,
            "buy-train",
            { buyTrain: { train: o.train, source: o.source, price: o.maxPrice, exchange: o.exchange || "" } },
            extra,
          ),
        );
      } else {
        const price = numberInput(`train-${o.train}-${o.source}`, o.minPrice || 1, o.maxPrice);
        controls.push(
          h(
            "span",
            { class: "with-input" },
            price,
            button(
              label,
              "buy-train",
              () => ({
                buyTrain: {
                  train: o.train,
                  source: o.source,
                  price: Number(price.value),
                  exchange: o.exchange || "",
                },
              }),
              extra,
            ),
          ),
        );
      }
    }
    for (const o of this.of("discardTrain"))
      controls.push(
        button(
          `Discard ${o.corporation}'s ${o.train}-train`,
          "discard",
          { discardTrain: { corporation: o.corporation, train: o.train } },
          { corporation: o.corporation, train: o.train },
        ),
      );
    for (const o of this.of("corporationBuyPrivate")) {
      const price = numberInput(`private-${o.company}`, o.minPrice, o.maxPrice);
      controls.push(
        h(
          "span",
          { class: "with-input" },
          price,
          button(
            `Buy ${o.company} from seat ${o.ownerSeat}`,
            "corporation-buy-private",
            () => ({ corporationBuyPrivate: { company: o.company, price: Number(price.value) } }),
            { company: o.company },
          ),
        ),
      );
    }
    for (const o of this.of("exchangePrivate"))
      controls.push(
        button(
          `Exchange ${o.company} for a share`,
          "exchange",
          { exchangePrivate: { company: o.company } },
          { company: o.company },
        ),
      );
    for (const _ of this.of("declareBankruptcy"))
      controls.push(button("Declare bankruptcy", "bankrupt", { declareBankruptcy: {} }));
    for (const _ of this.of("passTurn")) controls.push(button("Pass", "pass", { passTurn: {} }));
    return controls;
  }

  // Sends a command as this seat; a lost answer is retried with the same command id, so it is
  // applied once. The view then moves on with the event stream.
  async submit(command) {
    this.busy = true;
    this.render();
    const request = { gameId: this.gameId, command, commandId: commandId() };
    for (let attempt = 1; ; attempt += 1) {
      try {
        const answer = await this.api.call("GameService/SubmitCommand", request, { token: this.token });
        this.selection = null;
        this.map.clearPreview();
        this.onSent(Number(answer.version), command);
        return;
      } catch (error) {
        if (error.retryable && attempt < 3) continue;
        this.busy = false;
        this.render();
        this.onError(error);
        return;
      }
    }
  }
}
