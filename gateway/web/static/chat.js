// The table's chat (LobbyService.PostMessage, WatchChat, HideMessage): the messages as they
// stand, kept live by a watch that resumes from the last position seen + 1, a text box for the
// seats and the host (spectators read), and a Hide button on each message for the host.
// Refusals (too long, too fast, not at the table) are shown in words on the alert line.
import { clearError, showError } from "./alerts.js";
import { h } from "./html.js";
import { HEARTBEAT_SECONDS, ResumableWatch } from "./resumable.js";

export const MAX_TEXT = 500;
const HIDDEN_TEXT = "hidden by the host";
// The chat's own refusals: the alert line is cleared of them (and of nothing else) once a
// message is said or hidden.
const CHAT_REASONS = new Set([
  "MESSAGE_EMPTY",
  "MESSAGE_TOO_LONG",
  "CHAT_RATE_LIMITED",
  "CHAT_FULL",
  "MESSAGE_NOT_FOUND",
  "NOT_AT_TABLE",
]);

function clearChatError() {
  const alert = document.getElementById("error");
  if (alert && CHAT_REASONS.has(alert.dataset.reason)) clearError();
}
// Code points, as the server counts them (a train emoji is one character, not two).
const length = (text) => [...text].length;

class ChatWatch extends ResumableWatch {
  constructor(api, tableId, token, { onMessage, onStatus, onError }) {
    super({ onStatus, onError });
    Object.assign(this, { api, tableId, token, onMessage });
    this.next = 1;
  }

  connecting() {
    return `connecting (from message ${this.next})`;
  }

  open(signal) {
    const request = {
      tableId: this.tableId,
      fromPosition: String(this.next),
      heartbeatSeconds: HEARTBEAT_SECONDS,
    };
    return this.api.stream("LobbyService/WatchChat", request, { token: this.token, signal });
  }

  take(item) {
    if (item.message) this.onMessage(item.message);
    if (!item.heartbeat && item.position) this.next = Number(item.position) + 1;
    return false;
  }
}

const iso = (ms) => new Date(Number(ms)).toISOString();

function clock(ms) {
  const at = new Date(Number(ms));
  return at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

export class ChatPanel {
  constructor(element, { api, tableId, token, hostToken, seat }) {
    Object.assign(this, { element, api, tableId, token, hostToken, seat });
    // Seats speak with their token; a host without a seat speaks, and hides, with the host's.
    this.speaker = token || hostToken || "";
    this.items = new Map(); // number -> <li>
    this.pending = null; // {text, requestId}: a post to send again with the same id
    this.list = h("ol", { class: "chat-messages", "aria-live": "polite" });
    this.status = h("p", { class: "chat-status" }, "idle");
    this.watch = new ChatWatch(api, tableId, token || hostToken || "", {
      onMessage: (message) => this.show(message),
      onStatus: (text, connections) => {
        this.status.textContent = text;
        this.element.dataset.status = text;
        this.element.dataset.connections = connections;
      },
      onError: (error) => {
        this.status.textContent = `${error.reason || error.code}: ${error.message}`;
        this.element.dataset.reason = error.reason || "";
      },
    });
  }

  run() {
    this.element.replaceChildren(this.status, this.list, ...(this.speaker ? [this.form()] : []));
    this.element.dataset.role = this.token ? "seat" : this.hostToken ? "host" : "spectator";
    // For tests and scripts, as window.shikokuBoard does for the game: cut the chat's stream.
    window.shikokuChat = { dropStream: () => this.watch.drop() };
    this.watch.run();
  }

  stop() {
    this.watch.stop();
  }

  form() {
    this.box = h("textarea", {
      name: "text",
      rows: 2,
      placeholder: this.token ? "Say something to the table" : "Say something as the host",
      "aria-label": "Message",
      oninput: () => this.count(),
      onkeydown: (event) => {
        if (event.key === "Enter" && !event.shiftKey) {
          event.preventDefault();
          this.send();
        }
      },
    });
    this.left = h("span", { class: "chat-left" });
    this.sendButton = h("button", { type: "submit", "data-control": "chat-send" }, "Send");
    const form = h(
      "form",
      {
        "data-control": "chat",
        onsubmit: (event) => {
          event.preventDefault();
          this.send();
        },
      },
      this.box,
      h("div", { class: "chat-send" }, this.left, this.sendButton),
    );
    this.count();
    return form;
  }

  // Characters left: below zero the server will refuse it (MESSAGE_TOO_LONG), and says so.
  count() {
    const left = MAX_TEXT - length(this.box.value);
    this.left.textContent = `${left} characters left`;
    this.left.dataset.left = left;
    this.left.classList.toggle("over", left < 0);
  }

  async send() {
    const text = this.box.value;
    if (!this.pending || this.pending.text !== text) {
      this.pending = { text, requestId: crypto.randomUUID() };
    }
    const request = { tableId: this.tableId, text, requestId: this.pending.requestId };
    this.sendButton.disabled = true;
    try {
      const message = await this.api.call("LobbyService/PostMessage", request, {
        token: this.speaker,
      });
      this.pending = null;
      clearChatError();
      if (this.box.value === text) this.box.value = "";
      this.count();
      this.show(message);
    } catch (error) {
      // A retryable failure keeps the request id: sent again, the message is said once.
      if (!error.retryable) this.pending = null;
      showError(error);
    } finally {
      this.sendButton.disabled = false;
    }
  }

  async hide(number) {
    try {
      const message = await this.api.call(
        "LobbyService/HideMessage",
        { tableId: this.tableId, number: String(number) },
        { token: this.hostToken },
      );
      clearChatError();
      this.show(message);
    } catch (error) {
      showError(error);
    }
  }

  hideButton(number) {
    const hide = () => this.hide(number);
    return h("button", { type: "button", "data-control": "hide", onclick: hide }, "Hide");
  }

  // A message as it now stands: new at the bottom, or the one already shown, replaced.
  show(message) {
    const number = Number(message.number);
    const hidden = Boolean(message.hidden);
    const seat = Number(message.seat || 0);
    const item = h(
      "li",
      {
        class: "chat-message",
        dataset: { number, seat, hidden: String(hidden) },
      },
      h("span", { class: "chat-author" }, seat ? message.author || `seat ${seat}` : "host"),
      h("time", { class: "chat-time", datetime: iso(message.postedAtMs) }, clock(message.postedAtMs)),
      h("span", { class: "chat-text" }, hidden ? HIDDEN_TEXT : message.text || ""),
      this.hostToken && !hidden ? this.hideButton(number) : null,
    );
    const shown = this.items.get(number);
    if (shown) {
      shown.replaceWith(item);
    } else {
      const atBottom = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 8;
      const later = [...this.items.keys()].filter((n) => n > number).sort((a, b) => a - b)[0];
      this.list.insertBefore(item, later === undefined ? null : this.items.get(later));
      if (atBottom) this.list.scrollTop = this.list.scrollHeight;
    }
    this.items.set(number, item);
    this.element.dataset.messages = this.items.size;
  }
}
