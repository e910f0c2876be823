// What this browser keeps of its credentials, in localStorage, so that a reload (or the
// lobby's link to a game) comes back to the same seat. One module reads and writes them all:
//
//   apiKey() / setApiKey(key)          the client application's API key ("" if none)
//   player() -> {playerId, credential, name} | null
//   setPlayer(player) / forgetPlayer() the registered player (LobbyService.RegisterPlayer)
//   forgetPlayerAndTables()            the player, their seats and host tokens (not the key)
//   seat(tableId) -> {seat, token} | null
//   setSeat(tableId, seat, token)      the seat taken at a table and its seat token (JoinTable)
//   forgetSeat(tableId)                after LeaveTable
//   seatedTables() -> [tableId]        every table this browser holds a seat at
//   hostToken(tableId) -> token | ""
//   setHostToken(tableId, token)       the host token of a table created here (CreateTable)
//   hostedTables() -> [tableId]        every table created here
//
// Credentials never go into the page's address (history, bookmarks, screenshots).
const KEYS = {
  apiKey: "shikoku.apiKey",
  player: "shikoku.player",
  seats: "shikoku.seats",
  hosts: "shikoku.hosts",
};

function read(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key));
    return value === null ? fallback : value;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  localStorage.setItem(key, JSON.stringify(value));
}

export function apiKey() {
  return read(KEYS.apiKey, "");
}

export function setApiKey(key) {
  write(KEYS.apiKey, key || "");
}

export function player() {
  const stored = read(KEYS.player, null);
  return stored && stored.playerId && stored.credential ? stored : null;
}

export function setPlayer({ playerId, credential, name }) {
  write(KEYS.player, { playerId, credential, name });
}

export function forgetPlayer() {
  localStorage.removeItem(KEYS.player);
}

export function forgetPlayerAndTables() {
  for (const key of [KEYS.player, KEYS.seats, KEYS.hosts]) localStorage.removeItem(key);
}

export function seat(tableId) {
  const stored = read(KEYS.seats, {})[tableId];
  return stored && stored.token ? { seat: Number(stored.seat) || 0, token: stored.token } : null;
}

export function setSeat(tableId, seatNumber, token) {
  write(KEYS.seats, { ...read(KEYS.seats, {}), [tableId]: { seat: Number(seatNumber), token } });
}

export function forgetSeat(tableId) {
  const seats = read(KEYS.seats, {});
  delete seats[tableId];
  write(KEYS.seats, seats);
}

export function seatedTables() {
  return Object.keys(read(KEYS.seats, {}));
}

export function hostToken(tableId) {
  return read(KEYS.hosts, {})[tableId] || "";
}

export function setHostToken(tableId, token) {
  write(KEYS.hosts, { ...read(KEYS.hosts, {}), [tableId]: token });
}

export function hostedTables() {
  return Object.keys(read(KEYS.hosts, {}));
}
