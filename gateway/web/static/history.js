// The game's history: the board at any earlier version (GameService.GetState with `version`),
// stepped through by actions (a command's batch of events: its first event carries `command`)
// or chosen in the event log, which is the timeline. The live stream goes on meanwhile; "Live"
// returns to its latest state. Only the controls and which version to show are kept here: the
// open game (board.js) draws what `onShow` is given.
import { h } from "./html.js";

export class HistoryView {
  constructor(bar, log, { api, gameId, token, onShow, onLive, onError }) {
    Object.assign(this, { bar, log, api, gameId, token, onShow, onLive, onError });
    this.viewing = 0; // the version shown from the past; 0 while live
    this.latest = 0; // the latest version the stream has brought
    this.starts = []; // versions of events that began a command's batch, ascending
    this.events = 0; // events seen, with or without a command
    this.asking = 0; // counts GetState requests: only the last one asked for is shown
    this.#build();
    // The log's element outlives this game when the page opens another: stop() lets it go.
    this.listening = new AbortController();
    log.addEventListener(
      "click",
      (event) => {
        const item = event.target.closest("li[data-version]");
        if (item && log.contains(item)) this.show(Number(item.dataset.version));
      },
      { signal: this.listening.signal },
    );
  }

  stop() {
    this.listening.abort();
    this.asking += 1; // a state still being read is not shown
  }

  get live() {
    return this.viewing === 0;
  }

  #build() {
    const button = (label, control, title, onclick) =>
      h("button", { type: "button", title, "aria-label": title, dataset: { control }, onclick }, label);
    this.position = h("span", { id: "history-position" });
    this.note = h("span", { id: "history-note" });
    this.buttons = {
      first: button("|◀", "history-first", "The first position", () => this.show(this.#boundaries()[0])),
      back: button("◀", "history-back", "Back one action", () => this.back()),
      forward: button("▶", "history-forward", "Forward one action", () => this.forward()),
      live: button("Live", "history-live", "Back to the game as it stands", () => this.goLive()),
    };
    const { first, back, forward, live } = this.buttons;
    this.bar.append(
      h(
        "span",
        { class: "history-nav", role: "group", "aria-label": "History" },
        first,
        back,
        this.position,
        forward,
        live,
      ),
      this.note,
    );
    this.#render();
  }

  // Each event of the stream, in order.
  noteEvent(event) {
    const version = Number(event.version);
    this.events = Math.max(this.events, version);
    if (event.command && version > (this.starts.at(-1) ?? 0)) this.starts.push(version);
  }

  // The stream's latest version: the total; the view stays where it is.
  noteLatest(version) {
    this.latest = version;
    this.#render();
  }

  // The versions one step lands on: after each command's batch (the version before the next
  // command began) and the latest; every version when the stream names no commands.
  #boundaries() {
    const latest = this.latest;
    if (!this.starts.length) return Array.from({ length: latest }, (_, i) => i + 1);
    const ends = this.starts.map((start) => start - 1).filter((v) => v >= 1 && v < latest);
    return [...ends, latest];
  }

  back() {
    const from = this.viewing || this.latest;
    const earlier = this.#boundaries().filter((v) => v < from);
    if (earlier.length) this.show(earlier.at(-1));
  }

  forward() {
    if (this.live) return;
    const later = this.#boundaries().find((v) => v > this.viewing);
    this.show(later ?? this.latest);
  }

  // Shows the board at `version`; the latest version is the live view.
  async show(version) {
    if (!version || version < 1) return;
    if (version >= this.latest) return this.goLive();
    const asked = ++this.asking;
    this.viewing = version;
    this.#render();
    try {
      const state = await this.api.call(
        "GameService/GetState",
        { gameId: this.gameId, version: String(version) },
        { token: this.token },
      );
      if (asked !== this.asking) return; // a later step, or Live, came first
      this.onShow(state);
    } catch (error) {
      if (asked === this.asking) this.onError(error);
    }
  }

  goLive() {
    this.asking += 1;
    const wasLive = this.live;
    this.viewing = 0;
    this.#render();
    if (!wasLive) this.onLive();
  }

  // Scrolls the log, and only the log, to the selected event.
  #reveal(item) {
    const list = this.log;
    const top = item.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + item.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = top - list.clientHeight / 2;
  }

  #render() {
    const live = this.live;
    const shown = live ? this.latest : this.viewing;
    this.bar.dataset.viewing = live ? "live" : "history";
    this.position.dataset.version = shown;
    this.position.dataset.total = this.latest;
    this.position.textContent = live ? `live: version ${this.latest}` : `version ${shown} of ${this.latest}`;
    this.note.textContent = live ? "" : "The board as it was then; the game goes on. Live returns to it.";
    const earliest = this.#boundaries()[0] ?? 0;
    this.buttons.first.disabled = !this.latest || shown <= earliest;
    this.buttons.back.disabled = !this.latest || shown <= earliest;
    this.buttons.forward.disabled = live;
    this.buttons.live.disabled = live;
    for (const item of this.log.querySelectorAll("li.selected")) {
      item.classList.remove("selected");
      item.removeAttribute("aria-current");
    }
    if (!live) {
      const item = this.log.querySelector(`li[data-version='${this.viewing}']`);
      if (item) {
        item.classList.add("selected");
        item.setAttribute("aria-current", "step");
        this.#reveal(item);
      }
    }
  }
}
