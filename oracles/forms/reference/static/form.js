// The respondent's page: loads the form by its slug, renders its questions as text, submits the answers.
const slug = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const message = document.getElementById("message");
const form = document.getElementById("answers");
const list = document.getElementById("questions");
let questions = [];

function show(text) { message.textContent = text || ""; }

// Progress flags (spec: "Progress flags"): each step writes its own key when it happens.
function flag(key, value) {
  try { localStorage.setItem(key, JSON.stringify({ slug, ...value })); } catch (err) { /* storage may be unavailable */ }
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  let data = null;
  try { data = await response.json(); } catch (err) { data = null; }
  if (!response.ok) throw new Error(data && data.message ? data.message : `HTTP ${response.status}`);
  return data;
}

function render(question) {
  const li = document.createElement("li");
  li.dataset.testid = "question";
  li.dataset.questionId = String(question.id);
  const changed = () => flag("forms.answerChanged", { question_id: question.id });
  li.addEventListener("input", changed);
  li.addEventListener("click", (event) => { if (event.target.closest("[data-testid='option']")) changed(); });
  const title = document.createElement("span");
  title.dataset.testid = "question-title";
  title.textContent = question.title;
  li.appendChild(title);
  if (question.required) li.appendChild(document.createTextNode(" *"));
  if (question.type === "short_text" || question.type === "number") {
    const input = document.createElement("input");
    input.dataset.testid = "answer-input";
    input.type = "text";
    li.appendChild(document.createElement("br"));
    li.appendChild(input);
  } else {
    for (const option of question.options) {
      const label = document.createElement("label");
      label.dataset.testid = "option";
      const input = document.createElement("input");
      input.type = question.type === "single_choice" ? "radio" : "checkbox";
      input.name = `q${question.id}`;
      input.value = option;
      const text = document.createElement("span");
      text.textContent = option;
      label.appendChild(input);
      label.appendChild(text);
      li.appendChild(label);
    }
  }
  return li;
}

function answerOf(question, li) {
  if (question.type === "short_text") return li.querySelector("input").value;
  if (question.type === "number") {
    const raw = li.querySelector("input").value.trim();
    if (raw === "") return null;
    const value = Number(raw);
    return Number.isFinite(value) ? value : raw;
  }
  const chosen = Array.from(li.querySelectorAll("input")).filter((i) => i.checked).map((i) => i.value);
  if (question.type === "single_choice") return chosen.length ? chosen[0] : null;
  return chosen;
}

async function load() {
  try {
    const data = await call("GET", `/api/public/forms/${encodeURIComponent(slug)}`);
    document.getElementById("form-title").textContent = data.title;
    questions = data.questions;
    list.replaceChildren(...questions.map(render));
    form.hidden = false;
    show("");
    flag("forms.formShown", { questions: questions.length });
  } catch (err) { show(err.message); }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const answers = {};
  const items = list.querySelectorAll("[data-testid='question']");
  questions.forEach((question, index) => {
    const value = answerOf(question, items[index]);
    if (value !== null) answers[String(question.id)] = value;
  });
  flag("forms.submitted", { answers });
  try {
    const created = await call("POST", `/api/public/forms/${encodeURIComponent(slug)}/responses`, { answers });
    flag("forms.responseRecorded", { response_id: created.id });
    show("");
    form.hidden = true;
    document.getElementById("thank-you").hidden = false;
  } catch (err) { show(err.message); }
});

load();
