// The table's chat (LobbyService.PostMessage, WatchChat, HideMessage).
export class ChatPanel {
  constructor(element, { api, tableId, token, hostToken, seat }) {
    Object.assign(this, { element, api, tableId, token, hostToken, seat });
  }

  run() {}

  stop() {}
}
