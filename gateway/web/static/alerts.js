// The page's one alert line (#error): a refusal's reason and message, in words, with the
// reason and code in data-* attributes for tests and scripts.
const element = () => document.getElementById("error");

export function showError(error) {
  const reason = error.reason || error.code || "ERROR";
  element().textContent = `${reason}: ${error.message}`;
  element().dataset.reason = error.reason || "";
  element().dataset.code = error.code || "";
}

export function clearError() {
  element().textContent = "";
  delete element().dataset.reason;
  delete element().dataset.code;
}
