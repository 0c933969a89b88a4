// Streams answers into the chat page: the ask form is posted with fetch and the answer arrives as
// server-sent events (start, token..., done). Tokens render as Markdown built from DOM nodes, never
// as HTML; the final answer HTML comes from the server, already sanitized. Without JS the form posts
// normally.
(function () {
  "use strict";

  function csrfToken(form) {
    const input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A notice about a question that was not asked ("Please type a question.", too long, refused) is
  // about that attempt only: the next attempt takes it away, so notices never pile up.
  function clearNotices(messages) {
    messages.querySelectorAll(":scope > p.notice.error").forEach(function (note) { note.remove(); });
  }

  function showNotice(container, message) {
    const note = element("p", "notice error", message);
    note.setAttribute("role", "alert");
    container.appendChild(note);
    note.scrollIntoView({block: "nearest"});
  }

  // ---- Streaming Markdown (answers render as Markdown while they arrive) ----------------------
  // A small renderer for the answer's text so far: paragraphs, headings, lists, quotes, fenced code,
  // `code`, **bold**, *italic*, links (their text) and [n] citations. It builds DOM nodes with
  // textContent only, never HTML from the text, so nothing in an answer can run. Markup the model has
  // opened but not yet closed ("**bol", "[1") is shown as it will end, not as raw characters. The
  // server's sanitised HTML replaces all of it when the answer is done.
  const LIST_ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;

  function streamingFragment(text) {
    const fragment = document.createDocumentFragment();
    const lines = text.replace(/\r\n?/g, "\n").split("\n");
    let paragraph = null;
    let lists = [];  // open lists, outermost first: {node, indent, ordered}
    let code = null;
    const closeParagraph = function () { paragraph = null; };
    const closeLists = function () { lists = []; };
    const target = function () { return lists.length ? lists[lists.length - 1].item : fragment; };
    for (const line of lines) {
      if (code) {
        if (/^\s*(```|~~~)/.test(line)) { code = null; continue; }
        code.textContent += (code.textContent ? "\n" : "") + line;
        continue;
      }
      if (/^\s*(```|~~~)/.test(line)) {
        closeParagraph();
        const pre = document.createElement("pre");
        code = document.createElement("code");
        pre.appendChild(code);
        target().appendChild(pre);
        continue;
      }
      if (!line.trim()) { closeParagraph(); continue; }
      const item = LIST_ITEM.exec(line);
      if (item) {
        closeParagraph();
        const indent = item[1].length;
        const ordered = /\d/.test(item[2]);
        while (lists.length && lists[lists.length - 1].indent > indent) lists.pop();
        let list = lists[lists.length - 1];
        if (!list || list.indent < indent || list.ordered !== ordered) {
          if (list && list.indent === indent) lists.pop();
          const parent = target();
          const node = document.createElement(ordered ? "ol" : "ul");
          parent.appendChild(node);
          list = {node: node, indent: indent, ordered: ordered, item: null};
          lists.push(list);
        }
        list.item = document.createElement("li");
        list.node.appendChild(list.item);
        appendInline(list.item, item[3]);
        continue;
      }
      const heading = /^\s{0,3}(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        closeParagraph();
        closeLists();
        const node = document.createElement("h" + Math.min(6, heading[1].length + 2));
        appendInline(node, heading[2].replace(/\s#+\s*$/, ""));
        fragment.appendChild(node);
        continue;
      }
      if (lists.length && /^\s+\S/.test(line) && !paragraph) {
        appendInline(target(), " " + line.trim());  // a list item's wrapped line
        continue;
      }
      if (!/^\s/.test(line)) closeLists();
      const quote = /^\s*>\s?(.*)$/.exec(line);
      if (!paragraph) {
        paragraph = document.createElement(quote ? "blockquote" : "p");
        target().appendChild(paragraph);
      } else {
        paragraph.appendChild(document.createTextNode(" "));
      }
      appendInline(paragraph, quote ? quote[1] : line.trim());
    }
    return fragment;
  }

  // Inline Markdown into `parent`: `code`, **bold**, *italic* / _italic_, [text](url) as its text,
  // [n] citations. Unclosed markup at the end is applied to the rest of the text.
  function appendInline(parent, text) {
    const pattern = /(`+)([^`]*)(\1|$)|(\*\*|__)(?=\S)([\s\S]*?)(\4|$)|(\*|_)(?=\S)([\s\S]*?\S)?(\7(?!\7)|$)|\[(\d{1,3}(?:\s*,\s*\d{1,3})*)(\]|$)|\[([^\]\n]*)\]\(([^)\s]*)\)?|\[$/g;
    let last = 0;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (match[0] === "") { pattern.lastIndex++; continue; }
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      if (match[1] !== undefined) {
        const node = document.createElement("code");
        node.textContent = match[2];
        parent.appendChild(node);
      } else if (match[4] !== undefined) {
        const node = document.createElement("strong");
        appendInline(node, match[5] || "");
        parent.appendChild(node);
      } else if (match[7] !== undefined) {
        const node = document.createElement("em");
        appendInline(node, match[8] || "");
        parent.appendChild(node);
      } else if (match[10] !== undefined) {
        const node = document.createElement("span");
        node.className = "cite";
        node.textContent = "[" + match[10] + "]";
        parent.appendChild(node);
      } else if (match[12] !== undefined) {
        appendInline(parent, match[12]);
      }
      last = pattern.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // Re-renders `container` from `text` at most once per animation frame.
  function streamingRenderer(container) {
    let text = "";
    let pending = false;
    return function (piece) {
      text += piece;
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () {
        pending = false;
        container.replaceChildren(streamingFragment(text));
      });
    };
  }
  // ---- end of streaming Markdown ---------------------------------------------------------------

  // Parses an SSE byte stream into {event, data} objects, calling onEvent for each.
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length) onEvent(event, JSON.parse(data.join("\n")));
      }
    }
  }

  async function ask(form) {
    const question = form.elements.question.value.trim();
    const messages = document.getElementById("messages");
    const submit = form.querySelector("button[type=submit]");
    const stop = form.querySelector("button.stop");
    const body = new FormData(form);
    clearNotices(messages);
    if (!question) {
      showNotice(messages, "Please type a question.");
      return;
    }
    messages.querySelector(".empty")?.remove();
    // Asked: the filters are applied, so their panel closes and the answer gets the room.
    const filters = form.querySelector("details.filters");
    if (filters) filters.open = false;
    const asked = element("article", "message user");
    asked.appendChild(element("div", "content", question));
    const reply = element("article", "message assistant status-streaming");
    const content = element("div", "content answer streaming");
    reply.appendChild(content);
    const showToken = streamingRenderer(content);
    messages.append(asked, reply);
    reply.scrollIntoView({block: "nearest"});
    submit.disabled = true;  // the question stays in the box until the server has stored it ("start")

    const controller = new AbortController();
    let stopUrl = null;
    let finished = false;
    let started = false;
    stop.hidden = false;
    stop.disabled = false;
    stop.onclick = async function () {
      stop.disabled = true;
      // Ask the server to stop so it saves the partial answer and sends the final event;
      // give up on the stream if that does not arrive soon.
      if (stopUrl) {
        fetch(stopUrl, {method: "POST", headers: {"X-CSRFToken": csrfToken(form), "Accept": "application/json"}})
          .catch(function () {});
      }
      setTimeout(function () { if (!finished) controller.abort(); }, 5000);
    };

    try {
      const response = await fetch(form.action, {
        method: "POST", body: body, signal: controller.signal,
        headers: {"Accept": "text/event-stream", "X-CSRFToken": csrfToken(form)},
      });
      if (!response.ok) throw await serverFailure(response);
      await readEvents(response, function (event, data) {
        if (event === "start") {
          started = true;
          if (form.elements.question.value.trim() === question) form.elements.question.value = "";
          stopUrl = data.stop_url;
          reply.id = "m" + data.message;
          form.elements.conversation.value = data.conversation;
          if (location.pathname !== data.conversation_url) history.pushState({}, "", data.conversation_url);
          if (data.head) showHead(data.head, data.title);
        } else if (event === "token") {
          showToken(data.text);
        } else if (event === "notice") {
          asked.remove();
          reply.remove();
          showNotice(messages, data.message);
        } else if (event === "error") {
          throw new ServerFailure(data.message);
        } else if (event === "done") {
          finished = true;
          stop.hidden = true;
          reply.outerHTML = data.html;
          showFilters(form, data.filters_on || "");
        }
      });
      if (!finished && reply.isConnected) {
        showNotice(reply, "The answer stopped early; reload the page to see what was saved.");
      }
    } catch (error) {
      if (!started && error.name !== "AbortError") {
        // Nothing was stored: the question is still in the box, so leave no half exchange behind.
        asked.remove();
        reply.remove();
        showNotice(messages, failureText(error, false));
      } else if (reply.isConnected) {
        content.classList.remove("streaming");
        showNotice(reply, error.name === "AbortError" ? "Stopped; the partial answer is kept." : failureText(error, true));
      }
    } finally {
      submit.disabled = false;
      stop.hidden = true;
      refreshConversationList();
    }
  }

  // A failure the server reported (an HTTP error status or an "error" event), as opposed to a
  // connection that was lost.
  class ServerFailure extends Error {
    constructor(message) {
      super(message);
      this.name = "ServerFailure";
    }
  }

  async function serverFailure(response) {
    let message = "";
    try {
      const type = response.headers.get("Content-Type") || "";
      if (type.includes("application/json")) {
        message = (await response.json()).error || "";
      } else if (type.startsWith("text/plain")) {
        // The service's own short answers (database unavailable: 503, body too large: 413).
        const text = (await response.text()).trim();
        if (text.length < 300) message = text;
      }
    } catch (error) { /* not a body we can show: describe the status instead */ }
    if (!message) {
      message = response.status >= 500
        ? "The server failed while answering (HTTP " + response.status + ")."
        : "The server refused the question (HTTP " + response.status + "); reload the page and try again.";
    }
    return new ServerFailure(message);
  }

  function failureText(error, started) {
    const server = error instanceof ServerFailure;
    const what = server ? error.message : started
      ? "The connection to the server was lost while the answer was being written."
      : "The connection to the server was lost before it answered.";
    return what + (started ? " Reload the page to see what was saved." : " Your question is still in the box.");
  }

  // The closed filter line says what the latest answer was narrowed to, as the page does after a reload.
  function showFilters(form, summary) {
    const filters = form.querySelector("details.filters");
    const line = filters && filters.querySelector("summary");
    if (!line) return;
    line.replaceChildren(document.createTextNode(summary ? "Filters: " : "Filters"));
    if (summary) line.appendChild(element("span", "filters-on", summary));
    filters.toggleAttribute("data-active", !!summary);
  }

  // A new conversation's head (its title in place of "New conversation", and its actions), from the
  // server's "start" event; the tab's title follows.
  function showHead(html, title) {
    const head = document.querySelector(".chat-head");
    if (!head) return;
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    const fresh = template.content.firstElementChild;
    head.replaceWith(fresh);
    if (window.htmx) window.htmx.process(fresh);
    document.title = title + " · ragweb";
  }

  function refreshConversationList() {
    const list = document.getElementById("conversation-list");
    if (list && window.htmx) {
      window.htmx.ajax("GET", location.pathname, {target: "#conversation-list", swap: "outerHTML"});
    }
  }

  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form.id !== "ask-form" || !window.fetch || !window.TextDecoder) return;
    event.preventDefault();
    ask(form);
  });

  // Copy puts the answer's text with its sources (Markdown, kept in a <template> beside the button)
  // on the clipboard (the share link's Copy is a data-copy button: static/ragweb/copy.js).
  const copyText = window.ragweb.copyText;

  document.addEventListener("click", async function (event) {
    const button = event.target.closest("button.copy-answer");
    if (!button) return;
    const actions = button.closest(".answer-actions");
    const status = actions.querySelector(".action-status");
    try {
      await copyText(actions.querySelector("template.copy-text").content.textContent);
      status.textContent = "Copied.";
    } catch (error) {
      status.textContent = "Could not copy; select the text instead.";
    }
  });

  // Regenerate streams like a new question: the old question and answer leave the page and the ask
  // form asks again, naming the answer it replaces (the server keeps the old pair until the new one
  // is stored). Without JS the Regenerate form posts to the same URL and the page reloads.
  document.addEventListener("submit", function (event) {
    const form = event.target;
    const askForm = document.getElementById("ask-form");
    if (!form.classList.contains("regenerate") || !askForm || !window.fetch || !window.TextDecoder) return;
    const answer = form.closest(".message");
    const question = answer && answer.previousElementSibling;
    if (!question || !question.classList.contains("user")) return;
    event.preventDefault();
    if (askForm.querySelector("button[type=submit]").disabled) return;  // an answer is being written
    const draft = askForm.elements.question.value;
    const replaces = element("input", "");
    replaces.type = "hidden";
    replaces.name = "regenerate";
    replaces.value = form.elements.regenerate.value;
    askForm.appendChild(replaces);
    askForm.elements.question.value = question.querySelector(".content").innerText;
    question.remove();
    answer.remove();
    askForm.requestSubmit();  // the form's data is read at once, so the extra field can go now
    replaces.remove();
    // A draft the user was typing comes back; otherwise the question stays until the server has it.
    if (draft.trim()) askForm.elements.question.value = draft;
  });

  // Opening a conversation shows its latest answer, from the question that led to it (a link to
  // one message, such as #m12, goes to that message instead).
  function showLatestAnswer() {
    if (location.hash) return;
    const answers = document.querySelectorAll("#messages .message.assistant");
    const latest = answers[answers.length - 1];
    if (!latest) return;
    const question = latest.previousElementSibling;
    (question && question.classList.contains("user") ? question : latest).scrollIntoView({block: "start"});
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", showLatestAnswer);
  else showLatestAnswer();

  // Opened on a phone the filters are no longer pinned (app.css): bring their panel into view.
  document.addEventListener("toggle", function (event) {
    const filters = event.target;
    if (!filters.matches || !filters.matches("form.ask details.filters") || !filters.open) return;
    if (getComputedStyle(filters.closest("form")).position === "static") {
      filters.scrollIntoView({block: "start"});
    }
  }, true);

  // Enter sends, Shift+Enter starts a new line.
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if (target.name === "question" && target.form && target.form.id === "ask-form" &&
        event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      target.form.requestSubmit();
    }
  });
})();
