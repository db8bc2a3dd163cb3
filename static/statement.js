// The statement page's Print button: shown only where a script runs (the browser's own Print works without it).
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("statement-print");
  if (!button) return;
  button.hidden = false;
  button.addEventListener("click", () => window.print());
});
