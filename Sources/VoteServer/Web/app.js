// The VoteLedger web app: hash routes, one render function per page, the JSON API of `vote serve`.
// Pages are built as DOM nodes (never HTML strings), so no server text is ever parsed as markup.
// Secrets (voting tokens, issuance codes, the admin token) live only in variables of this module: never in a
// URL, the history, storage or a cookie. The one thing kept in storage is an anonymous place's ballot credential,
// from its issuance until its vote is cast (localStorage, so a voter who leaves can come back and cast it): it
// names no one. In a place that writes ballots in batches, the choice is kept with it while the ballot is held, until
// its receipt arrives (the credential alone reveals the choice through the receipt route once written).

import { auditReceipt, base64Encode, parseHead } from './audit.js';
import { blind, finalize, importPublicKey, prepare, verify } from './blind.js';
import { currentLanguage, languages, ordinal, plural, setLanguage, t } from './i18n.js';

const main = document.getElementById('main');

/** Timers and pollers of the page on screen; a route change stops them all. */
let stops = [];
/** The admin bearer token, for this tab only. */
let adminToken = null;
/** A receipt handed from the booth to the audit page in memory (not through the URL). */
let pendingReceipt = null;

// MARK: - DOM and API helpers

/** An element with attributes (`on*` functions become listeners) and children (strings become text). */
function h(tag, attributes = {}, ...children) {
    const svg = ['svg', 'rect', 'text', 'g', 'title', 'desc', 'line', 'polyline', 'polygon', 'circle'].includes(tag);
    const node = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
    for (const [name, value] of Object.entries(attributes ?? {})) {
        if (value === null || value === undefined || value === false) continue;
        if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
        else if (name === 'class') node.setAttribute('class', value);
        else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
        if (child === null || child === undefined || child === false) continue;
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
}

class APIError extends Error {
    constructor(status, code, message) {
        super(message);
        this.status = status;
        this.code = code;
    }
}

/** A call to `/api/v1`: JSON (or text) back, or an APIError with the server's code. An admin write carries an
 * Idempotency-Key and is sent again with it when its answer is lost (the connection fails) or the first attempt
 * is still being answered: the server then gives the first answer, tokens included, and records nothing twice. */
async function api(path, { method = 'GET', json, csv, admin = false, text = false } = {}) {
    const headers = {};
    let body;
    if (json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(json);
    } else if (csv !== undefined) {
        headers['Content-Type'] = 'text/csv';
        body = csv;
    }
    if (admin) headers.Authorization = `Bearer ${adminToken}`;
    const retries = admin && method === 'POST' ? 4 : 0;
    if (retries) headers['Idempotency-Key'] = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
    for (let attempt = 0; ; attempt += 1) {
        let response;
        try {
            response = await fetch(`/api/v1/${path}`, { method, headers, body, cache: 'no-store', credentials: 'omit' });
        } catch {
            if (attempt < retries) continue;
            throw new APIError(0, 'unreachable', t('unreachable'));
        }
        if (response.ok) return text ? response.text() : response.json();
        let error = { code: response.status === 503 || response.status === 429 ? 'busy' : 'http', message: response.statusText };
        try {
            error = (await response.json()).error ?? error;
        } catch { /* not JSON */ }
        if (error.code === 'idempotency_key_in_use' && attempt < retries) {
            await new Promise((resolve) => { setTimeout(resolve, 1000); });
            continue;
        }
        if (response.status === 503 || response.status === 429) error.code = 'busy';
        throw new APIError(response.status, error.code, error.message);
    }
}

/** Puts `nodes` on the page (absent ones, null or false, are left out). */
function show(...nodes) {
    main.replaceChildren(...nodes.flat().filter((node) => node !== null && node !== undefined && node !== false));
}

function title(text) {
    document.title = `${text} · VoteLedger`;
    return h('h1', { tabindex: '-1' }, text);
}

function problem(error) {
    return h('p', { class: 'alert', role: 'alert' }, error.code === 'unreachable' ? t('unreachable') : error.message);
}

function every(ms, action) {
    const id = setInterval(action, ms);
    stops.push(() => clearInterval(id));
}

/** `action` once, in `ms`, unless the route changes first (a timer, not a loop: nothing runs meanwhile). */
function later(ms, action) {
    const id = setTimeout(action, ms);
    stops.push(() => clearTimeout(id));
}

/** Offers `text` as a file download (a Blob URL, revoked at once: the data is not kept). */
function download(text, filename, type = 'text/plain') {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = h('a', { href: url, download: filename, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// MARK: - Time

const statusOrder = ['voting', 'registration', 'waiting', 'upcoming', 'ended', 'cancelled'];

/** A time in the viewer's time zone, with the zone shown ("Dec 1, 2026, 9:00 AM GMT+9"): a voter never guesses
 * whose clock a time is on. `time` is an ISO 8601 string or milliseconds since the epoch; `seconds`, for a time
 * that is not on the minute (a batch's due time), shows them too. */
export function localTime(time, { seconds = false } = {}) {
    return new Intl.DateTimeFormat(currentLanguage(), {
        year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit',
        ...(seconds ? { second: '2-digit' } : {}), timeZoneName: 'short',
    }).format(new Date(time));
}

/** `part` of `whole` as a percentage with one decimal, rounded half away from zero on the exact fraction (the
 * README's rule, which the CLI applies too): 5 of 16 is 31.3 %. Integer arithmetic, so no binary fraction
 * decides a tie. */
export function percentText(part, whole) {
    const tenths = whole > 0 ? Math.floor((2000 * part + whole) / (2 * whole)) : 0;
    return new Intl.NumberFormat(currentLanguage(), { style: 'percent', maximumFractionDigits: 1 }).format(tenths / 1000);
}

function windowText(window) {
    return t('window', { start: localTime(window.start), end: localTime(window.end) });
}

/** "Amended 2 times", small, for a place corrected after it was created (`amendments`, FORMAT.md §11.28), else
 * nothing: a reader sees that the windows shown are not the ones first announced. */
function amendedNote(place) {
    return place.amendments ? h('span', { class: 'help amended' }, plural('amended', place.amendments)) : null;
}

/** "Reason: …", for a cancelled place whose cancellation recorded why (`cancellation_reason`, FORMAT.md §11.30),
 * else nothing: shown wherever the place's "Cancelled" status is. */
function cancelledNote(place) {
    return place.cancellation_reason
        ? h('span', { class: 'cancelled-reason' }, t('cancelledReason', { reason: place.cancellation_reason })) : null;
}

function duration(ms) {
    let seconds = Math.max(0, Math.floor(ms / 1000));
    const parts = [];
    for (const [unit, size] of [['days', 86400], ['hours', 3600], ['minutes', 60]]) {
        if (seconds >= size || parts.length) {
            parts.push(t(unit, { n: Math.floor(seconds / size) }));
            seconds %= size;
        }
    }
    if (parts.length < 2) parts.push(t('seconds', { n: seconds }));
    return parts.slice(0, 3).join(' ');
}

/** The next change of a place's status as text ("Voting closes in 1 h 5 min"). */
function nextChange(place) {
    if (place.status === 'cancelled') return t('next.cancelled');
    const now = Date.now();
    const edges = [
        ['registration_start', place.registration.start], ['registration_end', place.registration.end],
        ['voting_start', place.voting.start], ['voting_end', place.voting.end],
    ];
    for (const [name, iso] of edges) {
        const at = Date.parse(iso);
        if (at > now) return t(`next.${name}`, { time: duration(at - now) });
    }
    return t('next.none');
}

// MARK: - Pages

async function home() {
    show(title(t('home')), h('p', {}, t('loading')));
    const places = await api('places');
    const sections = [];
    for (const status of statusOrder) {
        const group = places.filter((p) => p.status === status);
        if (group.length === 0) continue;
        sections.push(h('section', { 'aria-labelledby': `status-${status}` },
            h('h2', { id: `status-${status}` }, t(`status.${status}`)),
            h('ul', { class: 'cards' }, group.map((place) => {
                const countdown = h('p', { class: 'countdown' }, nextChange(place));
                every(1000, () => { countdown.textContent = nextChange(place); });
                return h('li', { class: 'card' },
                    h('h3', {}, h('a', { href: `#/place/${place.id}` }, place.name)),
                    place.description ? h('p', {}, place.description) : null,
                    h('p', {}, h('span', { class: 'muted' }, `${t('registration')}: `), windowText(place.registration)),
                    h('p', {}, h('span', { class: 'muted' }, `${t('voting')}: `), windowText(place.voting)),
                    place.amendments ? h('p', {}, amendedNote(place)) : null,
                    countdown,
                    place.cancellation_reason ? h('p', {}, cancelledNote(place)) : null,
                    status === 'voting' ? h('a', { href: `#/booth/${place.id}`, class: 'button' }, t('votePlace')) : null,
                    status === 'voting' || status === 'ended'
                        ? h('a', { href: `#/results/${place.id}` }, t('seeResults')) : null);
            }))));
    }
    show(title(t('home')), ...(sections.length ? sections : [h('p', {}, t('noPlaces'))]));
}

/** A whole number as the reader's language groups its digits ("1,210"). */
function numberText(n) {
    return new Intl.NumberFormat(currentLanguage()).format(n);
}

/** Whether a place's voters carry weights (`turnout` of a tally: a place that asks questions, with a voter weighing
 * other than 1): then every count shows its members and its weight, and the weight decides. */
function weighted(turnout) {
    return turnout.authorized_weight !== undefined && turnout.authorized_weight !== turnout.authorized;
}

/** A count of a question ({members, weight}): its weight alone where no voter is weighted, else both ("3 members ·
 * weight 242"). */
function countText(count, weighing) {
    return weighing ? plural('membersWeight', count.members, { n: numberText(count.members), weight: numberText(count.weight) })
        : String(count.weight);
}

/** The turnout; where voters are weighted, members and weight, with the weight's share (what decides). */
function turnoutText(turnout) {
    if (weighted(turnout)) {
        return t('turnoutWeighted', {
            voted: numberText(turnout.voted), authorized: numberText(turnout.authorized),
            votedWeight: numberText(turnout.voted_weight), authorizedWeight: numberText(turnout.authorized_weight),
            percent: percentText(turnout.voted_weight, turnout.authorized_weight),
        });
    }
    const percent = percentText(turnout.voted, turnout.authorized);
    return t('turnout', { voted: turnout.voted, authorized: turnout.authorized, percent });
}

/** The turnout of a tally, and how many voters were withdrawn from the roll (`withdrawn`, FORMAT.md §11.29): they
 * no longer count in it. */
function rollText(tally) {
    const text = turnoutText(tally.turnout);
    return tally.withdrawn ? `${text} · ${plural('withdrawnVoters', tally.withdrawn)}` : text;
}

async function placePage(id) {
    const [place, candidates, tally] = await Promise.all([
        api(`places/${id}`), api(`places/${id}/candidates`), api(`places/${id}/tally`)]);
    show(title(place.name),
        h('p', {}, h('span', { class: 'badge' }, t(`status.${place.status}`)), ' ', nextChange(place)),
        place.cancellation_reason ? h('p', {}, cancelledNote(place)) : null,
        place.description ? h('p', {}, place.description) : null,
        h('p', {}, h('span', { class: 'muted' }, `${t('registration')}: `), windowText(place.registration)),
        h('p', {}, h('span', { class: 'muted' }, `${t('voting')}: `), windowText(place.voting)),
        place.amendments ? h('p', {}, amendedNote(place)) : null,
        h('p', {}, rollText(tally)),
        place.questions ? questionList(place.questions) : [h('h2', {}, t('candidates')),
            candidates.length === 0 ? h('p', {}, t('noCandidates')) : h('ul', { class: 'cards' }, candidates.map((c) =>
                h('li', { class: c.withdrawn ? 'card withdrawn' : 'card' },
                    h('h3', {}, c.withdrawn ? h('s', {}, c.name) : c.name, ' ',
                        c.withdrawn ? h('span', { class: 'badge' }, t('withdrawn')) : null),
                    c.pledge ? h('p', {}, c.pledge) : null)))],
        place.status === 'voting' ? h('a', { href: `#/booth/${id}`, class: 'button' }, t('votePlace')) : null,
        ' ', h('a', { href: `#/results/${id}` }, t('seeResults')));
}

/** A list of places to pick from, linking to `#/{route}/ID`. */
async function pickPlace(heading, prompt, route, statuses, empty) {
    const places = (await api('places')).filter((p) => statuses.includes(p.status));
    show(title(heading), places.length === 0 ? h('p', {}, empty) : [h('p', {}, prompt),
        h('ul', {}, places.map((p) => h('li', {}, h('a', { href: `#/${route}/${p.id}` }, p.name), ' ',
            h('span', { class: 'muted' }, `(${t(`status.${p.status}`)})`))))]);
}

// MARK: Booth

const base32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The check character of 32 base32 characters (README, "Voting tokens"): Horner's rule in GF(32) mod x⁵+x²+1. */
function checkCharacter(chars) {
    const timesX = (v) => ((v << 1) & 32 ? (v << 1) ^ 0b100101 : v << 1);
    let sum = 0;
    for (const char of chars) sum = timesX(sum) ^ base32.indexOf(char);
    return base32[timesX(sum)];
}

/** What the voter typed, read: `{ token }` (canonical: 32 characters, and the check character if typed), or
 * `{ problem: 'malformed' | 'mistyped' }`. A token of 32 characters, from before the check character, is unchecked. */
export function readToken(typed) {
    const token = typed.toUpperCase().replace(/[\s-]/g, '');
    if (!/^[A-Z2-7]{32,33}$/.test(token)) return { problem: 'malformed' };
    if (token.length === 33 && checkCharacter(token.slice(0, 32)) !== token[32]) return { problem: 'mistyped' };
    return { token };
}

function refusal(error, place) {
    if (error.code === 'voting_closed') return t('refuse.closed');
    if (error.code === 'voting_not_open') return t('refuse.not_open');
    if (error.code === 'overloaded') return t('refuse.busy');
    if (error.code === 'invalid_answer' || error.code === 'malformed_answers') return t('refuse.answers', { message: error.message });
    const key = `refuse.${error.code}`;
    if (t(key) !== key) return t(key);
    if (error.code === 'unreachable') return t('unreachable');
    return t('refuse.other', { message: error.message });
}

/** What to tell the voter about a typed token before the confirmation step, or null when it may vote in
 * `place`: the one place the booth judges a token (its form and check character, then the status route:
 * unknown, or used). */
async function checkToken(typed, place) {
    const read = readToken(typed);
    if (read.problem) return t(read.problem === 'mistyped' ? 'tokenMistyped' : 'tokenBad');
    try {
        const status = await api(`places/${place.id}/status`, { method: 'POST', json: { token: read.token } });
        // A re-voting place takes a token again: its new ballot replaces the earlier one.
        return status.voted && !place.revoting ? t('refuse.already_voted') : null;
    } catch (error) {
        return refusal(error, place);
    }
}

/** The token field of a booth: `input`, and the `nodes` that show it (its label, the input, its help). */
function tokenField(token) {
    const input = h('input', {
        id: 'token', type: 'text', value: token, autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false',
        'aria-describedby': 'token-help', required: true,
    });
    return { input, nodes: [h('label', { for: 'token' }, t('token')), input, h('p', { class: 'help', id: 'token-help' }, t('tokenHelp'))] };
}

/** The candidates a booth offers (`active`: those not withdrawn), `chosen` checked. */
function candidateFieldset(active, chosen) {
    return h('fieldset', {}, h('legend', {}, t('choose')), active.map((c) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: 'candidate', value: c.candidate, checked: chosen?.candidate === c.candidate }),
        h('span', {}, h('strong', {}, c.name), c.pledge ? h('span', { class: 'help' }, ` — ${c.pledge}`) : null))));
}

/** The candidate of `active` ticked in `form`, or null. */
function pickedCandidate(form, active) {
    return active.find((c) => String(c.candidate) === new FormData(form).get('candidate')) ?? null;
}

/** A booth whose place is not open for voting: why, and when it opens. */
function closedBooth(place) {
    const text = place.status === 'ended' ? t('refuse.closed')
        : place.status === 'cancelled' ? t('refuse.place_cancelled')
        : `${t('refuse.not_open')} ${t('opensAt', { time: localTime(place.voting.start) })}`;
    show(title(t('boothTitle', { place: place.name })), h('p', { class: 'alert', role: 'alert' }, text));
}

/** The booth's last page, a token vote's or an anonymous one's: the receipt's facts, `explanation` (what it
 *  proves), and the buttons to save it and to check it now. */
function showReceipt(receipt, ...explanation) {
    show(title(t('castTitle')),
        h('p', { class: 'ok', role: 'status' }, t('castText', { height: receipt.height, index: receipt.index })),
        h('dl', { class: 'facts' },
            h('dt', {}, t('eventHash')), h('dd', { id: 'event-hash' }, receipt.event_hash),
            h('dt', {}, t('block')), h('dd', { id: 'event-height' }, receipt.height),
            h('dt', {}, t('eventIndex')), h('dd', { id: 'event-index' }, receipt.index)),
        ...explanation,
        h('button', {
            type: 'button', id: 'download-receipt',
            onclick: () => download(receipt.receipt, `vote-place-${receipt.place}-event-${receipt.index}.tlog-proof`),
        }, t('downloadReceipt')),
        h('button', {
            type: 'button', class: 'secondary',
            onclick: () => { pendingReceipt = receipt.receipt; location.hash = '#/audit'; },
        }, t('checkNow')));
    main.querySelector('h1').focus();
}

/** The booth. A voting link carries the token in the fragment (`#/booth/ID?t=TOKEN`, never sent to the server):
 * it fills the token, and leaves the address bar and the history at once. */
async function booth(id, linked) {
    if (linked) history.replaceState(null, '', `#/booth/${id}`);
    const [place, candidates] = await Promise.all([api(`places/${id}`), api(`places/${id}/candidates`)]);
    if (place.ballot === 'anonymous') return anonymousBooth(place, candidates, linked);
    if (place.questions?.length) return questionBooth(place, linked);
    const active = candidates.filter((c) => !c.withdrawn);
    let token = linked ?? '';
    let chosen = null;

    const step1 = (message) => {
        const { input: tokenInput, nodes: tokenNodes } = tokenField(token);
        const error = message ? h('p', { class: 'alert', role: 'alert', id: 'booth-error' }, message) : null;
        const button = h('button', { type: 'submit' }, t('next'));
        const form = h('form', {
            novalidate: true,
            onsubmit: async (event) => {
                event.preventDefault();
                token = tokenInput.value;
                chosen = pickedCandidate(form, active);
                const read = readToken(token);
                if (read.problem) return step1(t(read.problem === 'mistyped' ? 'tokenMistyped' : 'tokenBad'));
                if (!chosen) return step1(t('chooseMissing'));
                button.disabled = true;
                button.textContent = t('checking');
                const refused = await checkToken(token, place);
                if (refused) return step1(refused);
                step2();
            },
        },
        tokenNodes, candidateFieldset(active, chosen), button);
        show(title(t('boothTitle', { place: place.name })), error, form);
        (error ? tokenInput : main.querySelector('h1')).focus();
    };

    const step2 = (message) => {
        const castButton = h('button', { type: 'button', onclick: () => submit(castButton) },
            message ? t('retry') : t('cast'));
        show(title(t('confirmTitle')),
            message ? h('p', { class: 'alert', role: 'alert', id: 'booth-error' }, message) : null,
            h('p', { class: 'confirm' }, t('confirmText', { candidate: chosen.name, place: place.name })),
            castButton, h('button', { type: 'button', class: 'secondary', onclick: () => step1() }, t('back')));
        main.querySelector('h1').focus();
    };

    const submit = async (button) => {
        button.disabled = true;
        button.textContent = t('casting');
        try {
            const receipt = await api(`places/${id}/votes`, {
                method: 'POST', json: { candidate: chosen.candidate, token: readToken(token).token },
            });
            token = '';
            done(receipt);
        } catch (error) {
            if (error.code === 'busy' || error.code === 'overloaded' || error.code === 'unreachable') {
                return step2(refusal(error, place));
            }
            if (error.code === 'voting_closed' || error.code === 'voting_not_open') {
                Object.assign(place, await api(`places/${id}`).catch(() => place));
            }
            step1(refusal(error, place));
        }
    };

    const done = (receipt) => showReceipt(receipt, h('p', {}, t('receiptHelp')));

    if (place.status !== 'voting') return closedBooth(place);
    step1();
}

// MARK: Ballot of questions

/** A yes/no question's options by number, as the ledger numbers them (1 yes, 2 no, 3 abstain). */
const yesNo = ['yes', 'no', 'abstain'];

/** How a yes/no question passes, from the API's threshold ("2/3 of yes-and-no"). */
function thresholdText(threshold) {
    const fraction = /^(\d+\/\d+) of (yes-and-no|ballots)$/.exec(threshold ?? '');
    return fraction ? t(`threshold.${fraction[2]}`, { fraction: fraction[1] }) : t(`threshold.${threshold}`);
}

/** What a voter may tick in a choose question ("Choose up to 3 options."). */
function pickText(question) {
    if (question.min === question.max) return plural('pickExactly', question.max);
    if (question.min === 1) return plural('pickUpTo', question.max);
    return t('pickBetween', { min: question.min, max: question.max });
}

/** How a question is answered and counted, in words (the API's Question, or one read from the ledger). */
function methodText(question) {
    const parts = [];
    if (question.method === 'choose') parts.push(pickText(question), plural('chooseSeats', question.seats));
    else if (question.method === 'yes-no') {
        parts.push(t('yesNoMethod'), thresholdText(question.threshold),
            question.quorum ? t('quorumRule', { fraction: question.quorum }) : null);
    } else {
        parts.push(t('rankMethod'), question.rule === 'schulze' ? plural('schulzeSeats', question.seats)
            : question.seats === 1 ? t('irv') : plural('stvSeats', question.seats));
    }
    if (question.blank) parts.push(t('mayBeBlank'));
    return parts.filter(Boolean).join(' ');
}

/** An answer as the votes route takes it ("1,3", "2>1", "yes", "blank"): `picks` are option numbers from 1, in
 * ascending order (choose) or most preferred first (rank), or null for a blank answer. */
function answerText(question, picks) {
    if (picks === null) return 'blank';
    if (question.method === 'yes-no') return yesNo[picks[0] - 1];
    return picks.join(question.method === 'rank' ? '>' : ',');
}

/** An answer in words, as the confirmation step and the audit page show it. */
function answerWords(question, picks) {
    if (picks === null) return t('answerBlank');
    if (question.method === 'yes-no') return t(`answer.${yesNo[picks[0] - 1]}`);
    const names = picks.map((k) => question.options[k - 1] ?? t('optionNumber', { k }));
    if (question.method === 'choose') return names.join(', ');
    return names.map((name, i) => `${ordinal('rank', i + 1)}: ${name}`).join(', ');
}

/** The questions a place asks, as its page lists them. */
function questionList(questions) {
    return [h('h2', {}, t('questions')), h('ol', { class: 'cards', id: 'questions' }, questions.map((q, i) =>
        h('li', { class: 'card' },
            h('h3', {}, `${i + 1}. ${q.title}`), q.description ? h('p', {}, q.description) : null,
            h('p', { class: 'help' }, methodText(q)),
            q.options.length ? h('ul', {}, q.options.map((name) => h('li', {}, name))) : null)))];
}

// MARK: Ballot booth

/** Shows `text` in a question's `note` (empty: nothing), the booth's live word on the inputs above it. */
function tell(note, text) {
    note.textContent = text;
    note.className = text ? 'alert note' : 'note';
}

/** A choose question's boxes; a tick beyond the question's `max` is undone, and `note` says why. */
function chooseInputs(question, n, picks, note) {
    const limit = (event) => {
        const box = event.target;
        const ticked = box.form.querySelectorAll(`input[name="q${n}"]:checked`).length;
        if (box.checked && ticked > question.max) {
            box.checked = false;
            tell(note, plural('tooManyTicks', question.max));
        } else {
            tell(note, '');
        }
    };
    return question.options.map((name, i) => h('label', { class: 'choice' },
        h('input', {
            type: 'checkbox', name: `q${n}`, value: i + 1, checked: picks?.includes(i + 1), disabled: picks === null,
            onchange: limit,
        }), h('span', {}, name)));
}

/** A yes/no question's radio buttons: yes, no, abstain, and blank where the question allows it. */
function yesNoInputs(question, n, picks) {
    const current = picks === null ? 'blank' : picks && yesNo[picks[0] - 1];
    return [...yesNo, ...(question.blank ? ['blank'] : [])].map((value) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: `q${n}`, value, checked: current === value }),
        h('span', {}, t(value === 'blank' ? 'leaveBlank' : `answer.${value}`))));
}

/** A ranked question: per option a select of its rank ("Not ranked", "1st", "2nd", …), then its name. The rows
 * stand in rank order above a line, the unranked ones below it, and each can also be dragged by its grip (mouse or
 * touch, `dragRank`); the selects stay the way to rank by keyboard and screen reader. */
function rankInputs(question, n, picks, note) {
    const rows = question.options.map((name, i) => {
        const id = `q${n}-o${i + 1}`;
        const rank = picks ? picks.indexOf(i + 1) + 1 : 0;
        return h('div', { class: 'rank-row' },
            h('span', { class: 'grip', 'aria-hidden': 'true' }, '⠿'),
            h('select', { id, name: `q${n}`, 'data-option': i + 1, disabled: picks === null },
                h('option', { value: 0, selected: rank === 0 }, t('notRanked')),
                question.options.map((_, r) => h('option', { value: r + 1, selected: rank === r + 1 }, ordinal('rank', r + 1)))),
            h('label', { for: id }, name));
    });
    const list = h('div', { class: 'rank-list', onpointerdown: (event) => dragRank(event, list, note) },
        rows, h('div', { class: 'rank-line', 'aria-hidden': 'true' }, t('rankLine')));
    arrangeRanks(list);
    return [h('p', { class: 'help', 'aria-hidden': 'true' }, t('dragHint')), list];
}

/** Puts a ranked question's rows in the order of their selects' ranks (an option's number breaks a tie), the
 * unranked ones below the line. */
function arrangeRanks(list) {
    const rows = [...list.querySelectorAll('.rank-row')];
    const rank = (row) => Number(row.querySelector('select').value) || Infinity;
    const option = (row) => Number(row.querySelector('select').dataset.option);
    rows.sort((a, b) => rank(a) - rank(b) || option(a) - option(b));
    const ranked = rows.filter((row) => rank(row) !== Infinity);
    list.replaceChildren(...ranked, list.querySelector('.rank-line'), ...rows.slice(ranked.length));
}

/** A ranked option dragged by its grip to a new place: the row follows the pointer (captured by the list, so a
 * finger may leave it), and where it is let go the rows above the line are ranked 1st, 2nd, … in order and those
 * below are not ranked, so a drag always leaves a ranking the booth can send (no rank twice, none missing). `note`,
 * the question's live region, says where the option went. */
function dragRank(event, list, note) {
    const row = event.target.closest('.grip')?.parentElement;
    const select = row?.querySelector('select');
    if (!row || select.disabled || !event.isPrimary || event.button !== 0) return;
    event.preventDefault();
    arrangeRanks(list);
    list.setPointerCapture(event.pointerId);
    row.classList.add('dragging');
    const startY = event.clientY;
    const startTop = row.offsetTop;
    const move = (e) => {
        if (e.pointerId !== event.pointerId) return;
        // The row goes before the first other row (or the line) whose middle is below the pointer.
        const next = [...list.children].find((item) => {
            if (item === row) return false;
            const box = item.getBoundingClientRect();
            return e.clientY < box.top + box.height / 2;
        }) ?? null;
        if (next !== row.nextElementSibling) list.insertBefore(row, next);
        row.style.transform = `translateY(${e.clientY - startY - (row.offsetTop - startTop)}px)`;
    };
    const end = (e) => {
        if (e.pointerId !== event.pointerId) return;
        list.removeEventListener('pointermove', move);
        list.removeEventListener('pointerup', end);
        list.removeEventListener('pointercancel', end);
        row.classList.remove('dragging');
        row.style.transform = '';
        if (e.type === 'pointercancel') return arrangeRanks(list);
        const items = [...list.children];
        const line = items.findIndex((item) => item.classList.contains('rank-line'));
        items.forEach((item, i) => {
            if (i !== line) item.querySelector('select').value = i < line ? i + 1 : 0;
        });
        const name = row.querySelector('label').textContent;
        const rank = Number(select.value);
        note.textContent = rank ? t('movedToRank', { option: name, rank }) : t('movedUnranked', { option: name });
        note.className = 'note';
    };
    list.addEventListener('pointermove', move);
    list.addEventListener('pointerup', end);
    list.addEventListener('pointercancel', end);
}

/** "Leave blank" for a choose or ranked question: it disables the question's other inputs while ticked. */
function blankBox(n, checked) {
    const disable = (event) => {
        for (const input of event.target.form.querySelectorAll(`[name="q${n}"]`)) input.disabled = event.target.checked;
    };
    return h('label', { class: 'choice' },
        h('input', { type: 'checkbox', id: `q${n}-blank`, checked, onchange: disable }), h('span', {}, t('leaveBlank')));
}

/** Question `n` in the booth, showing `picks` (an answer given before, or undefined). */
function questionFieldset(question, n, picks, note) {
    const inputs = question.method === 'choose' ? chooseInputs(question, n, picks, note)
        : question.method === 'yes-no' ? yesNoInputs(question, n, picks) : rankInputs(question, n, picks, note);
    return h('fieldset', { id: `question-${n}`, 'data-method': question.method, 'aria-describedby': `q${n}-rule` },
        h('legend', {}, `${n}. ${question.title}`),
        question.description ? h('p', {}, question.description) : null,
        h('p', { class: 'help', id: `q${n}-rule` }, methodText(question)),
        inputs, question.blank && question.method !== 'yes-no' ? blankBox(n, picks === null) : null, note);
}

/** A ranking from the selects: `{ picks }` (most preferred first; undefined if none is ranked), or `{ problem }`
 * for a rank given twice or a rank left out below a given one. */
function readRanks(selects) {
    const byRank = [];
    for (const select of selects) {
        const rank = Number(select.value);
        if (!rank) continue;
        if (byRank[rank]) return { problem: t('rankTwice', { rank: ordinal('rank', rank) }) };
        byRank[rank] = Number(select.dataset.option);
    }
    const picks = byRank.slice(1);
    const gap = picks.findIndex((k) => k === undefined);
    if (gap >= 0) return { problem: t('rankGap', { rank: ordinal('rank', gap + 1) }) };
    return { picks: picks.length ? picks : undefined };
}

/** What question `n`'s inputs in `form` hold: `{ picks }` (option numbers, null for blank, undefined for no
 * answer) or `{ problem }`. */
function readAnswer(form, question, n) {
    if (form.querySelector(`#q${n}-blank`)?.checked) return { picks: null };
    const inputs = [...form.querySelectorAll(`[name="q${n}"]`)];
    if (question.method === 'rank') return readRanks(inputs);
    if (question.method === 'choose') {
        const ticked = inputs.filter((input) => input.checked).map((input) => Number(input.value));
        return { picks: ticked.length ? ticked : undefined };
    }
    const value = inputs.find((input) => input.checked)?.value;
    return { picks: value === undefined ? undefined : value === 'blank' ? null : [yesNo.indexOf(value) + 1] };
}

/** Question `n`'s answer in `form`, checked by the rules the server applies (FORMAT.md §11.22): `{ picks }`, or
 * `{ problem }` in words. */
function checkAnswer(form, question, n) {
    const read = readAnswer(form, question, n);
    let problem = read.problem ?? null;
    if (!problem && read.picks === undefined) problem = t(question.blank ? 'answerOrBlank' : 'answerMissing');
    else if (!problem && read.picks === null && !question.blank) problem = t('noBlank');
    else if (!problem && read.picks && question.method === 'choose') {
        if (read.picks.length < question.min) problem = plural('pickAtLeast', question.min);
        else if (read.picks.length > question.max) problem = plural('pickAtMost', question.max);
    }
    return problem ? { problem: t('questionProblem', { n, problem }) } : read;
}

/** Shows `message` as the booth's error next to `target` (the token field, or a question's fieldset) and moves
 * the focus there. */
function flag(message, target) {
    main.querySelector('#booth-error')?.remove();
    const error = h('p', { class: 'alert', role: 'alert', id: 'booth-error' }, message);
    if (target.tagName === 'FIELDSET') {
        target.querySelector('legend').after(error);
        target.setAttribute('aria-describedby', `booth-error q${target.id.split('-')[1]}-rule`);
        target.querySelector('input:not(:disabled), select:not(:disabled)')?.focus();
    } else {
        target.form.before(error);
        target.focus();
    }
}

/** The question a refusal names ("answer to question 2: …"), if it is one of `count`. */
function refusedQuestion(error, count) {
    const n = Number(/question (\d+)/.exec(error.message ?? '')?.[1]);
    return error.code === 'invalid_answer' && n >= 1 && n <= count ? n : null;
}

/** Every question in the booth, each showing its answer in `answers` (given before, or undefined), with its live
 * note. */
function questionFieldsets(questions, answers) {
    return questions.map((q, i) => questionFieldset(q, i + 1, answers[i], h('p', { class: 'note', 'aria-live': 'polite' })));
}

/** Every answer in `form`, checked (`checkAnswer`) and kept in `answers` in order up to the first with a problem:
 * null when all are good, else `{ problem, question }` (the problem in words, and the question's number). */
function checkAnswers(form, questions, answers) {
    for (const [i, q] of questions.entries()) {
        const answer = checkAnswer(form, q, i + 1);
        if (answer.problem) return { problem: answer.problem, question: i + 1 };
        answers[i] = answer.picks;
    }
    return null;
}

/** Every question with its answer in words, as the confirmation step reviews them. */
function answersReview(questions, answers, id) {
    return h('dl', { class: 'answers', id }, questions.flatMap((q, i) => [
        h('dt', {}, `${i + 1}. ${q.title}`), h('dd', { 'data-question': i + 1 }, answerWords(q, answers[i]))]));
}

/** The answers as the casting routes take them, one text ("1,3;yes;2>1;blank"). */
function answersText(questions, answers) {
    return questions.map((q, i) => answerText(q, answers[i])).join(';');
}

/** The booth of a place that asks questions: the token, every question, a confirmation in words, then the answers
 * cast as one text. */
function questionBooth(place, linked) {
    const questions = place.questions;
    let token = linked ?? '';
    const answers = questions.map(() => undefined);

    const step1 = (message, question) => {
        const { input: tokenInput, nodes: tokenNodes } = tokenField(token);
        const fieldsets = questionFieldsets(questions, answers);
        const button = h('button', { type: 'submit' }, t('next'));
        const form = h('form', {
            novalidate: true,
            onsubmit: async (event) => {
                event.preventDefault();
                token = tokenInput.value;
                const read = readToken(token);
                if (read.problem) return flag(t(read.problem === 'mistyped' ? 'tokenMistyped' : 'tokenBad'), tokenInput);
                const problem = checkAnswers(form, questions, answers);
                if (problem) return flag(problem.problem, fieldsets[problem.question - 1]);
                button.disabled = true;
                button.textContent = t('checking');
                const refused = await checkToken(token, place);
                if (refused) return step1(refused);
                step2();
            },
        }, tokenNodes, fieldsets, button);
        show(title(t('boothTitle', { place: place.name })),
            place.revoting ? h('p', { class: 'help', id: 'revoting-note' }, t('revotingNote')) : null, form);
        if (message) flag(message, question ? fieldsets[question - 1] : tokenInput);
        else main.querySelector('h1').focus();
    };

    const step2 = (message) => {
        const castButton = h('button', { type: 'button', onclick: () => submit(castButton) }, message ? t('retry') : t('cast'));
        show(title(t('confirmTitle')),
            message ? h('p', { class: 'alert', role: 'alert', id: 'booth-error' }, message) : null,
            h('p', { class: 'confirm' }, t('confirmBallot', { place: place.name })),
            answersReview(questions, answers, 'confirm-answers'),
            castButton, h('button', { type: 'button', class: 'secondary', onclick: () => step1() }, t('back')));
        main.querySelector('h1').focus();
    };

    const submit = async (button) => {
        button.disabled = true;
        button.textContent = t('casting');
        try {
            const receipt = await api(`places/${place.id}/votes`, {
                method: 'POST', json: { answers: answersText(questions, answers), token: readToken(token).token },
            });
            token = '';
            showReceipt(receipt, h('p', {}, t('receiptHelp')));
        } catch (error) {
            if (['busy', 'overloaded', 'unreachable'].includes(error.code)) return step2(refusal(error, place));
            if (error.code === 'voting_closed' || error.code === 'voting_not_open') {
                Object.assign(place, await api(`places/${place.id}`).catch(() => place));
            }
            step1(refusal(error, place), refusedQuestion(error, questions.length));
        }
    };

    if (place.status !== 'voting') return closedBooth(place);
    step1();
}

// MARK: Ballot results

/** A table of a question's options and their counts (`counts`, per option; members and weight if `weighing`), its
 * weight's share of `whole`, and which are `elected` (option numbers from 1). */
function optionTable(n, names, counts, elected, heading, whole, weighing) {
    return h('table', { id: `question-${n}-table` },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('option')), h('th', { scope: 'col', class: 'number' }, heading),
            h('th', { scope: 'col', class: 'number' }, t(weighing ? 'weightShare' : 'share')))),
        h('tbody', {}, names.map((name, k) => h('tr', { class: elected.includes(k + 1) ? 'elected' : null },
            h('th', { scope: 'row' }, name, elected.includes(k + 1) ? [' ', h('span', { class: 'badge' }, t('electedBadge'))] : null),
            h('td', { class: 'number', 'data-option': `${n}-${k + 1}` }, countText(counts[k] ?? { members: 0, weight: 0 }, weighing)),
            h('td', { class: 'number' }, percentText(counts[k]?.weight ?? 0, whole))))));
}

function electedLine(question, n, elected, final) {
    const names = elected.map((k) => question.options[k - 1]);
    return h('p', { class: 'outcome', id: `question-${n}-elected` },
        h('strong', {}, t(final ? 'electedList' : 'electedSoFar')), ' ', names.length ? names.join(', ') : t('noneElected'));
}

function chooseResult(question, n, count, final, weighing) {
    const answered = count.ballots.weight - count.blank.weight;
    return [optionTable(n, question.options, count.options, count.elected, t('count'), answered, weighing),
        h('p', { class: 'help' }, t('shareOfAnswers')), electedLine(question, n, count.elected, final)];
}

/** A yes/no question's counts and verdict; its quorum counts weight where voters are weighted. */
function yesNoResult(question, n, count, tally, final) {
    const names = yesNo.map((value) => t(`answer.${value}`));
    const verdict = count.passed ? (final ? 'passed' : 'passingSoFar') : (final ? 'notPassed' : 'notPassingSoFar');
    const weighing = weighted(tally.turnout);
    const quorum = question.quorum ? t(`${count.quorum_met ? 'quorumMet' : 'quorumNotMet'}${weighing ? 'Weight' : ''}`, {
        ballots: weighing ? numberText(count.ballots.weight) : count.ballots.weight,
        electorate: weighing ? numberText(tally.turnout.authorized_weight) : tally.turnout.authorized, fraction: question.quorum,
    }) : null;
    return [optionTable(n, names, count.options, [], t('count'), count.ballots.weight, weighing),
        h('p', { class: 'help' }, t('shareOfBallots')),
        h('p', { class: `outcome ${count.passed ? 'ok' : 'alert'}`, id: `question-${n}-verdict` },
            h('strong', {}, t(verdict)), ' ', thresholdText(question.threshold), ' ',
            t(count.threshold_reached ? 'thresholdReached' : 'thresholdNotReached'), quorum ? ` ${quorum}` : null)];
}

/** What a stage of a Scottish STV count did ("Blue excluded; Green elected"). */
function stageText(stage, name) {
    const action = t(`stage.${stage.action}`, { option: stage.option ? name(stage.option) : '' });
    return stage.elected?.length ? `${action}; ${t('stageElected', { names: stage.elected.map(name).join(', ') })}` : action;
}

function stagesTable(question, n, stages) {
    const name = (k) => question.options[k - 1] ?? String(k);
    return h('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-labelledby': `question-${n}-stages-title` },
        h('table', { id: `question-${n}-stages` },
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('stage')), h('th', { scope: 'col' }, t('stageAction')),
                question.options.map((option) => h('th', { scope: 'col', class: 'number' }, option)),
                h('th', { scope: 'col', class: 'number' }, t('nonTransferable')))),
            h('tbody', {}, stages.map((stage) => h('tr', {},
                h('th', { scope: 'row' }, stage.number), h('td', {}, stageText(stage, name)),
                stage.totals.map((total) => h('td', { class: 'number' }, total)),
                h('td', { class: 'number' }, stage.non_transferable))))));
}

function rankResult(question, n, count, final, weighing) {
    const ranked = count.ballots.weight - count.blank.weight;
    const table = optionTable(n, question.options, count.options, ranked ? count.elected : [], t('firstPreferences'), ranked, weighing);
    if (!ranked) return [table, h('p', { class: 'outcome', id: `question-${n}-elected` }, t('noRankings'))];
    const nodes = [table, h('p', { class: 'help' }, t('firstPreferencesHelp')), electedLine(question, n, count.elected, final)];
    if (count.order) {
        nodes.push(h('h3', {}, t('schulzeOrder')),
            h('ol', { id: `question-${n}-order` }, count.order.map((k) => h('li', {}, question.options[k - 1]))));
    }
    if (count.stages) {
        nodes.push(h('h3', { id: `question-${n}-stages-title` }, t('stagesTitle')),
            h('p', {}, t('quota', { quota: count.quota })), stagesPicture(question, n, count),
            stagesTable(question, n, count.stages));
    }
    return nodes;
}

/** About how wide `text` is at 13 px, in px: a Hangul or CJK character takes about twice a Latin one. */
function textWidth(text) {
    let width = 0;
    for (const char of text) width += /[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/.test(char) ? 13 : 7.5;
    return width;
}

/** `text` cut with an ellipsis to about `width` px at 13 px. */
function cutText(text, width) {
    let cut = text;
    while (cut.length > 1 && textWidth(cut) > width) cut = cut.slice(0, -1);
    return cut === text ? text : `${cut.slice(0, -1)}…`;
}

/** `text` in lines of about `width` px at most at 13 px bold, broken between words (a picture's text does not
 * wrap by itself). */
function wrapText(text, width) {
    const lines = [];
    for (const word of text.split(' ')) {
        if (lines.length && textWidth(`${lines.at(-1)} ${word}`) * 1.1 <= width) lines[lines.length - 1] += ` ${word}`;
        else lines.push(word);
    }
    return lines;
}

/** A figure of a count (a decimal text such as "1.66666") rounded to two decimals, for a picture. */
function figureText(value) {
    return new Intl.NumberFormat(currentLanguage(), { maximumFractionDigits: 2 }).format(Number(value));
}

/** A picture of a Scottish STV count (`count.stages`): per stage, a bar for each option still in the count (its
 * votes after that stage) and one for the exhausted (non-transferable) votes, against a dashed quota line. An
 * option elected, or excluded, says so in words beside its bar, not by colour alone; an option excluded earlier is
 * left out. The stages table below it carries every figure exactly. */
function stagesPicture(question, n, count) {
    const width = chartWidth();
    const name = (k) => question.options[k - 1] ?? String(k);
    const excludedAt = new Map(count.stages.filter((s) => s.action === 'excluded').map((s) => [s.option, s.number]));
    const electedAt = new Map(count.stages.flatMap((s) => (s.elected ?? []).map((k) => [k, s.number])));
    const quota = Number(count.quota);
    const most = Math.max(quota, ...count.stages.flatMap((s) => [...s.totals, s.non_transferable].map(Number)), 1);
    // Names take at most 30 % of the width, cut with an ellipsis.
    const room = width * 0.3;
    const label = (text) => cutText(text, room);
    const left = Math.ceil(Math.min(room, Math.max(...[...question.options, t('exhausted')].map(textWidth)))) + 8;
    const barRoom = width - left - 112; // the rest: the figure and "elected" or "excluded" after the bar
    const x = (value) => left + Math.round((Number(value) / most) * barRoom);
    const row = 22;
    const titleId = `question-${n}-picture-title`;
    const descId = `question-${n}-picture-desc`;
    const stages = [];
    let y = 26;
    for (const stage of count.stages) {
        const shown = stage.totals.map((total, i) => ({ k: i + 1, total }))
            .filter(({ k }) => !(excludedAt.get(k) < stage.number));
        const heading = wrapText(`${t('stage')} ${stage.number}: ${stageText(stage, name)}`, width);
        const top = y + 10 + heading.length * 18;
        const bars = shown.map(({ k, total }, i) => {
            const state = excludedAt.get(k) === stage.number ? 'excluded' : electedAt.get(k) <= stage.number ? 'elected' : null;
            const at = top + i * row;
            return h('g', { class: `bar-row ${state ?? ''}`.trim(), 'data-option': k },
                h('text', { x: 0, y: at + 14 }, label(name(k))),
                h('rect', { class: state ? `${state}-bar` : 'bar', x: left, y: at + 3, width: x(total) - left, height: 14, rx: 2 }),
                h('text', { x: x(total) + 6, y: at + 14, class: state ? `${state}-text` : null },
                    state ? `${figureText(total)} · ${t(`picture.${state}`)}` : figureText(total)));
        });
        const exhaustedAt = top + shown.length * row;
        bars.push(h('g', { class: 'bar-row exhausted' },
            h('text', { x: 0, y: exhaustedAt + 14 }, label(t('exhausted'))),
            h('rect', { class: 'exhausted-bar', x: left, y: exhaustedAt + 3, width: x(stage.non_transferable) - left, height: 14, rx: 2 }),
            h('text', { x: x(stage.non_transferable) + 6, y: exhaustedAt + 14 }, figureText(stage.non_transferable))));
        const bottom = exhaustedAt + row;
        stages.push(h('g', { class: 'stage', 'data-stage': stage.number },
            heading.map((line, i) => h('text', { x: 0, y: y + 18 * (i + 1), class: 'stage-title' }, line)),
            h('line', { class: 'quota', x1: x(quota), x2: x(quota), y1: top, y2: bottom }), bars));
        y = bottom + 10;
    }
    const elected = count.elected.map(name).join(', ') || t('noneElected');
    return h('svg', {
        class: 'chart rounds', id: `question-${n}-picture`, viewBox: `0 0 ${width} ${y}`, role: 'img',
        'aria-labelledby': titleId, 'aria-describedby': descId,
    }, h('title', { id: titleId }, t('picture.title', { question: question.title })),
    h('desc', { id: descId }, plural('picture.desc', count.stages.length, { quota: figureText(quota), elected })),
    h('line', { class: 'quota', x1: 0, x2: 24, y1: 9, y2: 9 }),
    h('text', { x: 30, y: 14 }, t('picture.quota', { quota: figureText(quota) })),
    stages);
}

/** Every question's count (tally.questions), each with the question as `questions` has it. */
function questionResults(questions, tally) {
    const final = tally.status === 'ended';
    const weighing = weighted(tally.turnout);
    return (tally.questions ?? []).slice(0, questions.length).map((count, i) => {
        const [question, n] = [questions[i], i + 1];
        const body = question.method === 'choose' ? chooseResult(question, n, count, final, weighing)
            : question.method === 'yes-no' ? yesNoResult(question, n, count, tally, final)
            : rankResult(question, n, count, final, weighing);
        return h('section', { class: 'question-result', id: `result-${n}`, 'aria-labelledby': `result-${n}-title` },
            h('h2', { id: `result-${n}-title` }, `${n}. ${question.title}`),
            h('p', { class: 'help' }, methodText(question)),
            h('p', {}, t('ballotsBlank', { ballots: countText(count.ballots, weighing), blank: countText(count.blank, weighing) })), body);
    });
}

// MARK: Anonymous booth

/** Bytes as base64url without padding, as the anonymous-ballot routes carry them. */
function base64url(bytes) {
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text) {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

async function sha256Hex(bytes) {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The ballot key of anonymous place `id` on the ledger, or null if the server does not show it: the receipt of the
 * place's creation audited as the audit page audits a receipt (`auditReceipt`: the authority's signature on its
 * head, the event's inclusion under it, the current signed head extending it), and the key read from the event. */
async function ledgerBallotKey(id) {
    const [created, key, head] = await Promise.all([
        api(`places/${id}/created`), api('key', { text: true }), api('head', { text: true }),
    ]);
    const consistency = async (from, to) => (await api(`proofs/consistency?from=${from}&to=${to}`)).proof;
    const report = await auditReceipt({ receipt: created.receipt, key, head, consistency });
    const event = report.event;
    return report.ok && event?.kind === 'place_created' && event.place === id ? event.ballotKey : null;
}

/** Where this device keeps place `id`'s ballot credential until its vote is cast. */
const credentialStorage = (id) => `voteledger.credential.${id}`;

/** The credential kept for `place` (one issued under its ballot key), or null. */
function keptCredential(place, keyHash) {
    try {
        const kept = JSON.parse(localStorage.getItem(credentialStorage(place.id)));
        return kept?.place === place.id && kept.ballot_key_hash === keyHash ? kept : null;
    } catch {
        return null;
    }
}

function keepCredential(credential) {
    try {
        localStorage.setItem(credentialStorage(credential.place), JSON.stringify(credential));
    } catch { /* storage disabled: the credential lives in this page and in the file the voter saves */ }
}

function forgetCredential(id) {
    try {
        localStorage.removeItem(credentialStorage(id));
    } catch { /* storage disabled: nothing was kept */ }
}

/** What an anonymous ballot in a place with candidates holds, as the anonymous booth asks for it: `fields()`, the
 * first step's inputs; `read(form)`, the choice taken from them (null, or `{ problem }` in words); `review()`, the
 * choice in words to confirm; `recorded()`, the choice as the receipt page repeats it; `body()`, the cast's field;
 * `refused(error)`, `{}` when a refused cast is the choice's to make again (a candidate withdrawn since), else null;
 * `keptText`, what the first step says when a credential is kept on the device; `kept()`, the choice as it is kept with
 * the credential while its ballot is held for a batch, and `restore(kept)`, that choice taken back (false if it no
 * longer fits the place). */
function candidateBallot(place, candidates) {
    const active = candidates.filter((c) => !c.withdrawn);
    let chosen = null;
    return {
        keptText: t('credentialKept'),
        fields: () => candidateFieldset(active, chosen),
        read: (form) => {
            chosen = pickedCandidate(form, active);
            return chosen ? null : { problem: t('chooseMissing') };
        },
        review: () => h('p', { class: 'confirm' }, t('confirmText', { candidate: chosen.name, place: place.name })),
        recorded: () => h('p', { id: 'receipt-candidate' }, chosen.name),
        body: () => ({ candidate: chosen.candidate }),
        refused: (error) => (['candidate_withdrawn', 'candidate_not_found'].includes(error.code) ? {} : null),
        kept: () => ({ candidate: chosen.candidate }),
        restore: (kept) => {
            chosen = candidates.find((c) => c.candidate === kept?.candidate) ?? null;
            return chosen !== null;
        },
    };
}

/** What an anonymous ballot in a place that asks questions holds, as `candidateBallot` says: every answer, checked
 * as the token booth checks it (`checkAnswers`), so the booth never sends a ballot the ledger would refuse. A
 * problem and a refusal name their question (`question`, a number), and `fieldset(n)` is question n's on the page. */
function answersBallot(place) {
    const questions = place.questions;
    const answers = questions.map(() => undefined);
    let fieldsets = [];
    return {
        keptText: t('credentialKeptAnswers'),
        fields: () => {
            fieldsets = questionFieldsets(questions, answers);
            return fieldsets;
        },
        fieldset: (n) => fieldsets[n - 1],
        read: (form) => checkAnswers(form, questions, answers),
        review: () => [h('p', { class: 'confirm' }, t('confirmBallot', { place: place.name })),
            answersReview(questions, answers, 'confirm-answers')],
        recorded: () => answersReview(questions, answers, 'receipt-answers'),
        body: () => ({ answers: answersText(questions, answers) }),
        refused: (error) => (['invalid_answer', 'malformed_answers'].includes(error.code)
            ? { question: refusedQuestion(error, questions.length) } : null),
        kept: () => ({ answers: answers.slice() }),
        restore: (kept) => {
            if (!Array.isArray(kept?.answers) || kept.answers.length !== questions.length) return false;
            kept.answers.forEach((answer, i) => { answers[i] = answer; });
            return true;
        },
    };
}

/** The booth of an anonymous place (RFC 9474 blind signatures). The voter's issuance code gets a credential
 * signed blind: the page makes a random message, prepares and blinds it, sends the blinded message with the code,
 * unblinds the answer and checks the signature. The credential is kept on this device (and in a file, if the
 * voter saves it) while the page waits a random 5 to 30 seconds, so the server cannot match the ballot to the
 * issuance by time; then the ballot goes out with the credential, the candidate or the answers, and no code. A
 * voter who leaves comes back and casts the kept (or saved) credential. A place that writes its ballots in batches
 * answers the cast 202, held: the booth says when the batch is due and asks for the receipt once it is (`held`). */
async function anonymousBooth(place, candidates, linked) {
    const id = place.id;
    const spki = fromBase64url(place.ballot_key);
    const key = await importPublicKey(spki);
    const keyHash = await sha256Hex(spki);
    const ballot = place.questions?.length ? answersBallot(place) : candidateBallot(place, candidates);
    let code = linked ?? '';
    let credential = keptCredential(place, keyHash);
    /** Whether this page cast again a held ballot the server had lost: said on the held page and the receipt. */
    let castAgain = false;

    const alert = (message) => (message ? h('p', { class: 'alert', role: 'alert', id: 'booth-error' }, message) : null);

    /** Whether the key this page blinds under and casts for is the place's key on the ledger: checked before the
     * code is sent and before a ballot is cast, so a key served to this voter alone spends and reveals nothing. */
    const keyOnLedger = async () => {
        const onLedger = await ledgerBallotKey(id);
        return onLedger !== null && onLedger.length === spki.length && onLedger.every((b, i) => b === spki[i]);
    };
    const keyRefused = () => {
        show(title(t('boothTitle', { place: place.name })), alert(t('refuse.ballot_key_not_on_ledger')));
        main.querySelector('h1').focus();
    };

    /** A saved credential file, read and checked against this place's key before it is used. */
    const openFile = async (file) => {
        try {
            const saved = JSON.parse(await file.text());
            if (saved.place !== id || saved.ballot_key_hash !== keyHash) return t('credentialOtherPlace');
            if (!(await verify(key, fromBase64url(saved.credential), fromBase64url(saved.signature)))) {
                return t('credentialBad');
            }
            credential = saved;
            keepCredential(saved);
            return null;
        } catch {
            return t('credentialBad');
        }
    };

    /** The first step's page: `nodes` under the title, and `message` above them, or at the question it names with the
     * focus there; else the focus on `input` if there is a message, or on the title. */
    const firstStep = (message, question, input, ...nodes) => {
        show(title(t('boothTitle', { place: place.name })), question ? null : alert(message), ...nodes);
        if (question) flag(message, ballot.fieldset(question));
        else (message && input ? input : main.querySelector('h1')).focus();
    };
    /** A problem of the choice in the form: at its question, on the page as it is (nothing typed is lost); else the
     * page again (`again`) with it. */
    const wrong = (problem, again) => (problem.question ? flag(problem.problem, ballot.fieldset(problem.question))
        : again(problem.problem));

    // Step 1 with a credential on this device: choose or answer, then confirm and cast it.
    const castKept = (message, question) => {
        const button = h('button', { type: 'submit', id: 'cast-kept' }, t('next'));
        const form = h('form', {
            novalidate: true,
            onsubmit: (event) => {
                event.preventDefault();
                const problem = ballot.read(form);
                if (problem) return wrong(problem, castKept);
                step2();
            },
        }, ballot.fields(), button);
        firstStep(message, question, null, h('p', { class: 'ok', role: 'status', id: 'credential-kept' }, ballot.keptText), form);
    };

    // Step 1 without one: the issuance code (checked before the confirmation step) and the choice or answers.
    const step1 = (message) => {
        const codeInput = h('input', {
            id: 'token', type: 'text', value: code, autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false',
            'aria-describedby': 'token-help', required: true,
        });
        const button = h('button', { type: 'submit' }, t('next'));
        const form = h('form', {
            novalidate: true,
            onsubmit: async (event) => {
                event.preventDefault();
                code = codeInput.value;
                const problem = ballot.read(form);
                if (problem) return wrong(problem, step1);
                const read = readToken(code);
                if (read.problem) return step1(t(read.problem === 'mistyped' ? 'codeMistyped' : 'codeBad'));
                button.disabled = true;
                button.textContent = t('checkingCode');
                try {
                    const status = await api(`places/${id}/status`, { method: 'POST', json: { token: read.token } });
                    if (status.credential_issued) return step1(t('refuse.credential_already_issued'));
                } catch (error) {
                    return step1(refusal(error, place));
                }
                step2();
            },
        },
        h('label', { for: 'token' }, t('issuanceCode')), codeInput,
        h('p', { class: 'help', id: 'token-help' }, t('issuanceCodeHelp')), ballot.fields(), button);
        const file = h('input', {
            id: 'credential-file', type: 'file', accept: '.json,application/json',
            onchange: async () => {
                if (!file.files[0]) return;
                const refused = await openFile(file.files[0]);
                if (refused) return step1(refused);
                castKept();
            },
        });
        firstStep(message, null, codeInput, h('p', {}, t('anonymousIntro')), form,
            h('p', {}, h('label', { for: 'credential-file' }, t('credentialFile')), file));
    };

    // Step 2: the choice or every answer in words, to confirm; then the credential is asked for (only now), or the
    // one kept is cast.
    const step2 = (message, retry) => {
        const button = h('button', { type: 'button', onclick: () => (retry ?? (credential ? cast : obtain))(button) },
            message ? t('retry') : t(credential ? 'cast' : 'getCredential'));
        show(title(t('confirmTitle')), alert(message), ballot.review(),
            credential ? null : h('p', {}, t('anonymousConfirm')),
            button, h('button', { type: 'button', class: 'secondary', onclick: () => (credential ? castKept() : step1()) },
                t('back')));
        main.querySelector('h1').focus();
    };

    // Checks the key against the ledger, then blinds a fresh credential; a request whose answer is lost is sent again
    // with the same blinded message, which the server answers with the same blind signature and records nothing twice.
    const obtain = async (button) => {
        button.disabled = true;
        button.textContent = t('gettingCredential');
        try {
            if (!(await keyOnLedger())) return keyRefused();
        } catch (error) {
            return step2(refusal(error, place));
        }
        const prepared = prepare(key, crypto.getRandomValues(new Uint8Array(32)));
        const blinding = await blind(key, prepared);
        request(button, blinding);
    };

    const request = async (button, blinding) => {
        button.disabled = true;
        button.textContent = t('gettingCredential');
        let answer;
        try {
            answer = await api(`places/${id}/credentials`, {
                method: 'POST',
                json: { code: readToken(code).token, blinded_message: base64url(blinding.blindedMessage) },
            });
        } catch (error) {
            if (['busy', 'overloaded', 'unreachable'].includes(error.code)) {
                return step2(refusal(error, place), (again) => request(again, blinding));
            }
            return step1(refusal(error, place));
        }
        let signature;
        try {
            signature = await finalize(key, blinding, fromBase64url(answer.blind_signature));
        } catch {
            return step1(t('credentialBad'));
        }
        code = '';
        credential = {
            place: id, ballot_key_hash: keyHash, credential: base64url(blinding.preparedMessage),
            signature: base64url(signature),
        };
        keepCredential(credential);
        waiting();
    };

    // The credential is held: offer to save it, and wait a random while before casting.
    const waiting = (message) => {
        const delay = message ? 0 : 5000 + crypto.getRandomValues(new Uint32Array(1))[0] % 25001;
        const castAt = Date.now() + delay;
        const countdown = h('p', { id: 'cast-countdown', role: 'timer', 'aria-live': 'off' });
        const button = message ? h('button', { type: 'button', id: 'cast-now', onclick: () => cast(button) }, t('retry'))
            : null;
        let started = false;
        const tick = () => {
            if (started) return;
            const left = Math.max(0, Math.ceil((castAt - Date.now()) / 1000));
            if (left > 0) {
                countdown.textContent = t('castingIn', { seconds: left });
                return;
            }
            started = true;
            countdown.textContent = t('casting');
            cast();
        };
        show(title(t('credentialTitle')), alert(message),
            h('p', { class: 'ok', role: 'status' }, t('credentialReady')),
            h('p', { class: 'alert', id: 'credential-warning' }, t('credentialWarning')),
            h('button', {
                type: 'button', id: 'save-credential',
                onclick: () => download(`${JSON.stringify(credential, null, 2)}\n`, `ballot-credential-place-${id}.json`, 'application/json'),
            }, t('saveCredential')),
            h('p', {}, t('waitWhy')), message ? null : countdown, h('p', { class: 'help' }, t('comeBack')), button);
        main.querySelector('h1').focus();
        if (!message) {
            tick();
            every(500, tick);
        }
    };

    /** Casts the credential; `button`, if the voter pressed one, says so while it is under way; `recast`, when the
     * booth casts again a ballot that was held and lost, is said on the pages that follow (held and receipt). */
    const cast = async (button, recast) => {
        if (recast) castAgain = true;
        if (button) {
            button.disabled = true;
            button.textContent = t('casting');
        }
        try {
            if (!(await keyOnLedger())) return keyRefused();
        } catch (error) {
            return waiting(refusal(error, place));
        }
        try {
            const receipt = await api(`places/${id}/ballots`, {
                method: 'POST',
                json: { credential: credential.credential, signature: credential.signature, ...ballot.body() },
            });
            if (receipt.held) return held(receipt);
            forgetCredential(id);
            credential = null;
            done(receipt);
        } catch (error) {
            if (error.code === 'credential_already_voted') {
                forgetCredential(id);
                credential = null;
                return step1(t('refuse.credential_already_voted'));
            }
            const again = ballot.refused(error);
            if (again) return castKept(refusal(error, place), again.question);
            waiting(refusal(error, place));
        }
    };

    const done = (receipt) => showReceipt(receipt,
        castAgain ? h('p', { class: 'help', id: 'booth-recast' }, t('heldRecast')) : null,
        h('h2', {}, t('yourBallot')), ballot.recorded(),
        h('h2', {}, t('anonymousProves')), h('p', { id: 'receipt-proves' }, t('anonymousProvesText')),
        h('h2', {}, t('anonymousNotProves')), h('p', { id: 'receipt-not-proves' }, t('anonymousNotProvesText')));

    // A ballot held for its place's next batch (answered 202): the credential stays on this device, with the choice,
    // until the receipt arrives, so that this page, or the booth opened again on this device, can fetch the receipt
    // once the batch is written, or cast the same ballot again if the server lost it (it was never recorded).
    const held = (answer, problem) => {
        credential = { ...credential, held: ballot.kept() };
        keepCredential(credential);
        const due = answer.batch_due;
        const status = h('p', { class: 'help', id: 'held-poll', role: 'status' });
        show(title(t('heldTitle')),
            alert(problem), castAgain ? h('p', { class: 'help', id: 'booth-recast', role: 'status' }, t('heldRecast')) : null,
            h('p', { class: 'ok', id: 'held-status' }, t('heldText')),
            h('p', { id: 'batch-due' }, due
                ? t(answer.batches?.size ? 'heldDueSize' : 'heldDue', { time: localTime(due, { seconds: true }), size: answer.batches?.size })
                : t('heldWhenEnough', { size: answer.batches?.size ?? '' })),
            h('h2', {}, t('yourBallot')), ballot.recorded(),
            h('p', { id: 'held-keep' }, t('heldKeep')), status);
        main.querySelector('h1').focus();
        poll(due, status);
    };

    /** Asks for the held ballot's receipt once its batch is due (`due`, an ISO time, or null for a rule of size alone:
     * then every 10 s), every few seconds after that; never before `due` by more than a minute, in case this device's
     * clock is behind the server's. 200 shows the receipt, 404 casts the same ballot again. */
    const poll = (due, status) => {
        const dueAt = due ? Date.parse(due) : NaN;
        const now = Date.now();
        let wait;
        if (Number.isNaN(dueAt)) wait = 10000;
        else if (dueAt > now) wait = Math.min(dueAt - now + 1000, 60000);
        else wait = now - dueAt < 60000 ? 3000 : 10000;
        later(wait, async () => {
            let answer;
            try {
                answer = await api(`places/${id}/ballots/receipt`, { method: 'POST', json: { credential: credential.credential } });
            } catch (error) {
                if (error.code === 'ballot_not_found') {
                    status.textContent = t('heldLost');
                    return cast(null, true);
                }
                status.textContent = t('heldAskAgain', { problem: refusal(error, place) });
                return poll(due, status);
            }
            if (!answer.held) {
                forgetCredential(id);
                credential = null;
                return done(answer);
            }
            status.textContent = t('heldStill', { time: localTime(Date.now(), { seconds: true }) });
            poll(answer.batch_due, status);
        });
    };

    /** The booth opened again with a credential whose ballot was held: its receipt if written, the held page if still
     * held, the same ballot cast again if the server lost it; false if the kept choice no longer fits the place. */
    const resume = async () => {
        if (!credential.held || !ballot.restore(credential.held)) return false;
        show(title(t('boothTitle', { place: place.name })), h('p', { role: 'status' }, t('heldChecking')));
        let answer;
        try {
            answer = await api(`places/${id}/ballots/receipt`, { method: 'POST', json: { credential: credential.credential } });
        } catch (error) {
            if (error.code === 'ballot_not_found') cast(null, true);
            else held({ batch_due: null }, refusal(error, place));
            return true;
        }
        if (answer.held) {
            held(answer);
        } else {
            forgetCredential(id);
            credential = null;
            done(answer);
        }
        return true;
    };

    if (credential?.held && (await resume()) !== false) return;
    if (place.status !== 'voting') return closedBooth(place);
    if (credential) castKept();
    else step1();
}

// MARK: Results

/** The width a picture is drawn at: the width it is shown at, so its text stays readable on a phone and is not huge
 * on a desktop. */
function chartWidth() {
    return Math.round(Math.max(260, Math.min(main.clientWidth - 32, 700)));
}

/** A horizontal bar chart of the tally, drawn as SVG; the table beside it carries the same numbers. */
function chart(rows) {
    const width = chartWidth();
    const row = 56;
    const total = rows.length * row + 8;
    const votes = rows.reduce((sum, r) => sum + r.votes, 0);
    const share = (r) => percentText(r.votes, votes);
    const svg = h('svg', {
        class: 'chart', viewBox: `0 0 ${width} ${total}`, role: 'img', 'aria-labelledby': 'chart-title',
    }, h('title', { id: 'chart-title' }, t('chart')));
    rows.forEach((r, i) => {
        const y = i * row + 4;
        const barWidth = Math.max(r.votes > 0 ? 2 : 0, Math.round(r.share * (width - 4)));
        svg.append(h('g', { class: 'row', 'data-candidate': r.candidate },
            h('text', { x: 0, y: y + 16 }, `${r.name}${r.withdrawn ? ` (${t('withdrawn')})` : ''}`),
            h('rect', { class: 'track', x: 0, y: y + 24, width: width - 4, height: 18, rx: 3 }),
            h('rect', { class: r.withdrawn ? 'withdrawn-bar' : 'bar', x: 0, y: y + 24, width: barWidth, height: 18, rx: 3 }),
            h('text', { x: width - 4, y: y + 16, 'text-anchor': 'end' }, `${t(r.votes === 1 ? 'vote' : 'votes', { n: r.votes })} · ${share(r)}`)));
    });
    const table = h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('candidate')), h('th', { scope: 'col' }, t('count')),
            h('th', { scope: 'col' }, t('share')))),
        h('tbody', {}, rows.map((r) => h('tr', {},
            h('th', { scope: 'row' }, r.name, r.withdrawn ? ` (${t('withdrawn')})` : ''),
            h('td', { class: 'number', 'data-votes': r.candidate }, r.votes),
            h('td', { class: 'number' }, share(r))))));
    return [svg, table];
}

/** The ledger head a tally was counted at: its tree size, block and block hash, and the tree's root hash when the
 * signed head `headText` (GET head) is the same tree (else the ledger has grown since, and the root is not known
 * here); then how anyone recounts the figures. */
function countedAt(tally, headText) {
    let root = null;
    try {
        const { checkpoint } = parseHead(headText);
        if (checkpoint.size === BigInt(tally.tree_size)) root = base64Encode(checkpoint.root);
    } catch { /* no signed head: the tree size and the block say where the count stands */ }
    return [h('h2', {}, t('countedAtTitle')),
        h('dl', { class: 'facts' },
            h('dt', {}, t('treeSize')), h('dd', { id: 'counted-size' }, tally.tree_size),
            h('dt', {}, t('block')), h('dd', {}, tally.height),
            h('dt', {}, t('blockHash')), h('dd', {}, tally.head_hash),
            root ? [h('dt', {}, t('treeRoot')), h('dd', { id: 'counted-root' }, root)] : null),
        h('p', { id: 'recount' }, t('recount', { place: tally.place }))];
}

async function results(id) {
    const state = h('p', { id: 'results-state', role: 'status' });
    const turnout = h('p', { id: 'turnout' });
    const body = h('div', { id: 'results-body' });
    const foot = h('div', { id: 'results-head' });
    let heading;
    let rows = [];
    let counts = null; // a place that asks questions: its latest tally
    let drawn = null; // ... and the one on screen, so a poll that changes nothing keeps the focus and the scroll
    let cancelled = false; // a cancelled place counts nothing: no chart of zeros
    const draw = () => {
        if (cancelled) return body.replaceChildren();
        if (!counts) return body.replaceChildren(...chart(rows));
        const shown = JSON.stringify([counts.status, counts.turnout, counts.questions, chartWidth()]);
        if (shown !== drawn) body.replaceChildren(...questionResults(place.questions, counts));
        drawn = shown;
    };
    // The pictures are drawn at the width they are shown: draw them again when that changes (a phone turned).
    window.addEventListener('resize', draw);
    stops.push(() => window.removeEventListener('resize', draw));
    const place = await api(`places/${id}`);
    const status = h('span', { class: 'badge', id: 'results-status' });
    const facts = h('dl', { class: 'facts plain', id: 'results-facts' },
        h('dt', {}, t('statusLabel')), h('dd', {}, status, place.cancellation_reason ? [' ', cancelledNote(place)] : null),
        h('dt', {}, t('registration')), h('dd', {}, windowText(place.registration)),
        h('dt', {}, t('voting')), h('dd', {}, windowText(place.voting),
            place.amendments ? [' ', amendedNote(place)] : null));
    const print = h('button', { type: 'button', class: 'secondary', id: 'print-results', onclick: () => window.print() },
        t('printResults'));
    const refresh = async () => {
        const [tally, headText] = await Promise.all([api(`places/${id}/tally`), api('head', { text: true }).catch(() => '')]);
        if (!heading) {
            heading = title(t('resultsTitle', { place: tally.name }));
            show(heading, print, facts, state, turnout, body, foot);
        }
        status.textContent = t(`status.${tally.status}`);
        foot.replaceChildren(...countedAt(tally, headText));
        const certified = tally.certified_height;  // null until the results are certified
        // A place whose results are embargoed: no counts until voting ends (the server sends none).
        state.textContent = tally.embargoed ? t('embargoed', { time: localTime(place.voting.end) })
            : tally.status === 'cancelled' ? t('cancelledState')
            : tally.status === 'voting' ? t('soFar')
            : certified !== null ? t(place.questions ? 'certifiedCounts' : 'certifiedAt', { height: certified })
            : tally.status === 'ended' ? t(place.questions ? 'recountedFinal' : 'notCertified') : t('notStarted');
        turnout.textContent = rollText(tally);
        rows = tally.tally;
        counts = place.questions ? tally : null;
        cancelled = tally.status === 'cancelled';
        if (tally.embargoed) {
            body.replaceChildren();
            drawn = null;
        } else {
            draw();
        }
        return tally.status === 'voting' || (tally.status === 'ended' && certified === null);
    };
    if (await refresh()) {
        every(2000, () => refresh().catch(() => {}));
    }
}

// MARK: Audit

async function auditPage() {
    const receipt = h('textarea', { id: 'receipt', spellcheck: 'false', 'aria-describedby': 'audit-intro' });
    if (pendingReceipt) receipt.value = pendingReceipt;
    pendingReceipt = null;
    const file = h('input', {
        id: 'receipt-file', type: 'file', accept: '.tlog-proof,text/plain',
        onchange: async () => { if (file.files[0]) receipt.value = await file.files[0].text(); },
    });
    const key = h('input', { id: 'key', type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'key-help' });
    const againstHead = h('input', { id: 'against-head', type: 'checkbox', checked: true });
    const witnesses = h('textarea', { id: 'witnesses', spellcheck: 'false', 'aria-describedby': 'witnesses-help' });
    const quorum = h('input', { id: 'quorum', type: 'number', min: '1' });
    const outcome = h('div', { id: 'audit-outcome', 'aria-live': 'polite' });
    const button = h('button', { type: 'submit' }, t('verify'));
    const form = h('form', {
        onsubmit: async (event) => {
            event.preventDefault();
            button.disabled = true;
            outcome.replaceChildren(h('p', {}, t('verifying')));
            try {
                const named = witnesses.value.split('\n').map((line) => line.trim()).filter((line) => line);
                const needed = quorum.value ? Number(quorum.value) : named.length;
                outcome.replaceChildren(...await runAudit(receipt.value, key.value, againstHead.checked, named, needed));
            } catch (error) {
                outcome.replaceChildren(problem(error));
            } finally {
                button.disabled = false;
            }
        },
    },
    h('label', { for: 'receipt' }, t('receipt')), receipt,
    h('label', { for: 'receipt-file' }, t('receiptFile')), file,
    h('label', { for: 'key' }, t('key')), key, h('p', { class: 'help', id: 'key-help' }, t('keyHelp')),
    h('label', { class: 'inline' }, againstHead, h('span', {}, t('againstHead'))),
    h('label', { for: 'witnesses' }, t('witnesses')), witnesses,
    h('p', { class: 'help', id: 'witnesses-help' }, t('witnessesHelp')),
    h('label', { for: 'quorum' }, t('quorum')), quorum,
    button);
    show(title(t('auditTitle')), h('p', { id: 'audit-intro' }, t('auditIntro')), form, outcome);
    try {
        key.value = (await api('key', { text: true })).trim();
    } catch { /* the visitor pastes the key */ }
}

async function runAudit(receipt, key, againstHead, witnesses, quorum) {
    const head = againstHead ? await api('head', { text: true }) : null;
    const consistency = async (from, to) => (await api(`proofs/consistency?from=${from}&to=${to}`)).proof;
    const report = await auditReceipt({ receipt, key, head, consistency, witnesses, quorum });
    const failed = (id) => report.checks.some((c) => c.id === id && c.status === 'fail');
    const verdict = failed('consistency') ? t('rewritten') : failed('signature') ? t('notSigned')
        : failed('inclusion') ? t('altered') : failed('witnesses') ? t('notCosigned') : t('auditBad');
    const nodes = [
        report.ok ? h('p', { class: 'ok', role: 'status', id: 'audit-verdict' }, t('auditOk'))
            : h('p', { class: 'alert', role: 'alert', id: 'audit-verdict' }, verdict),
        h('ul', { class: 'checks' }, report.checks.map((c) => h('li', { 'data-check': c.id, 'data-status': c.status },
            h('span', { class: `verdict ${c.status}` }, c.status === 'pass' ? `✓ ${t('pass')}` : c.status === 'fail' ? `✗ ${t('fail')}` : `– ${t('skip')}`),
            h('span', {}, t(`check.${c.id}`), c.detail && c.detail !== 'rewritten' ? h('span', { class: 'help' }, ` (${c.detail})`) : null)))),
    ];
    if (report.event?.kind === 'vote_cast' || report.event?.kind === 'anonymous_vote_cast') {
        nodes.push(h('p', {}, t(report.event.kind === 'vote_cast' ? 'auditEvent' : 'auditAnonymousEvent', {
            place: report.event.place, candidate: report.event.candidate, index: report.index, size: report.receiptSize,
            height: report.height,
        })));
    }
    if (['ballot_cast', 'ballot_replaced', 'anonymous_ballot_cast'].includes(report.event?.kind)) {
        nodes.push(...await ballotDescription(report));
    }
    if (report.event?.kind === 'place_created') nodes.push(...placeDescription(report));
    if (report.headSize !== null) nodes.push(h('p', {}, t('auditHead', { size: report.headSize })));
    return nodes;
}

/** A ballot's receipt in words (a token's, or an anonymous one's): the answers as the event holds them, named with
 * the questions the server gives for the place when they fit (else by number). */
async function ballotDescription(report) {
    const { kind, place, answers } = report.event;
    const facts = { place, index: report.index, size: report.receiptSize, height: report.height };
    const asked = await api(`places/${place}`).then((p) => p.questions ?? [], () => []);
    const questions = asked.length === answers.length ? asked : null;
    return [h('p', {}, t(kind === 'anonymous_ballot_cast' ? 'auditAnonymousBallot' : 'auditBallot', facts)),
        h('ol', { id: 'audit-answers' }, answers.map((given, i) => {
            const picks = given && given.map((k) => k + 1);
            if (!questions) return h('li', {}, picks ? t('optionsGiven', { list: picks.join(', ') }) : t('answerBlank'));
            return h('li', {}, h('strong', {}, `${questions[i].title}: `), answerWords(questions[i], picks));
        })),
        questions ? h('p', { class: 'help' }, t('auditWording')) : null];
}

/** A place's creation in words, with its questions as the event holds them. */
function placeDescription(report) {
    const { place, questions } = report.event;
    const facts = { place, index: report.index, size: report.receiptSize, height: report.height };
    if (!questions) return [h('p', {}, t('auditPlace', facts))];
    return [h('p', {}, t('auditPlaceQuestions', facts)),
        h('ol', { id: 'audit-questions' }, questions.map((q) => h('li', {}, h('strong', {}, q.title), ' ', methodText(q),
            q.options.length ? ` (${q.options.join(', ')})` : '')))];
}

// MARK: Console: a ballot of questions

/** A new question in the console's editor, in the questions file's form. */
function newQuestion() {
    return { title: '', description: '', method: 'choose', options: [], blank: false, min: 1, max: 1, seats: 1 };
}

/** The yes/no thresholds the console offers, as the questions file names them; the two with a fraction are named
 * by what follows it ("2/3 of yes-and-no"). */
const thresholdKinds = ['more-yes-than-no', 'yes-and-no', 'ballots', 'majority-of-electorate'];

/** Question `i` (from 0) of `count` in the console's editor: its title, description, method and the fields of each
 * method (those of the others hidden), its options one per line, whether it may be left blank, and buttons to move
 * it up or down and to remove it. Fields are found by their data-field when read (`readQuestionEditor`). */
function questionEditor(q, i, count) {
    const id = (name) => `qe${i + 1}-${name}`;
    const input = (name, value, attributes = {}) => h('input', { id: id(name), 'data-field': name, type: 'text', value: value ?? '', ...attributes });
    const number = (name, value) => input(name, value, { type: 'number', min: 1, step: 1 });
    const labelled = (name, label, control) => [h('label', { for: id(name) }, label), control];
    const select = (name, values, chosen, text) => h('select', { id: id(name), 'data-field': name },
        values.map((value) => h('option', { value, selected: value === chosen }, text(value))));
    const fraction = /^(\d+\/\d+) of (yes-and-no|ballots)$/.exec(q.threshold ?? '');
    const kind = fraction ? fraction[2] : q.threshold ?? 'more-yes-than-no';
    const part = (method, ...children) => h('div', { 'data-method': method, hidden: q.method !== method }, ...children);
    return h('fieldset', { class: 'question-editor', 'data-index': i },
        h('legend', {}, t('questionNumber', { n: i + 1 })),
        labelled('title', t('questionTitle'), input('title', q.title)),
        labelled('description', t('description'), input('description', q.description)),
        labelled('method', t('method'), select('method', ['choose', 'yes-no', 'rank'], q.method, (m) => t(`method.${m}`))),
        part('choose', h('div', { class: 'numbers' },
            h('div', {}, labelled('min', t('qe.min'), number('min', q.min))),
            h('div', {}, labelled('max', t('qe.max'), number('max', q.max))),
            h('div', {}, labelled('seats', t('qe.seats'), number('seats', q.seats))))),
        part('yes-no',
            labelled('threshold', t('qe.threshold'), select('threshold', thresholdKinds, kind, (k) => t(`qe.threshold.${k}`))),
            h('div', { 'data-fraction': '', hidden: !['yes-and-no', 'ballots'].includes(kind) },
                labelled('fraction', t('qe.fraction'), input('fraction', fraction?.[1] ?? '1/2', { inputmode: 'numeric', placeholder: '2/3' }))),
            labelled('quorum', t('qe.quorum'), input('quorum', q.quorum, { inputmode: 'numeric', placeholder: '1/4' }))),
        part('rank',
            h('div', { class: 'numbers' }, h('div', {}, labelled('rank-seats', t('qe.seats'), number('rank-seats', q.seats)))),
            labelled('rule', t('qe.rule'), select('rule', ['scottish-stv', 'schulze'], q.rule ?? 'scottish-stv', (r) => t(`qe.rule.${r}`)))),
        h('div', { 'data-method': 'choose rank', hidden: q.method === 'yes-no' },
            labelled('options', t('qe.options'), h('textarea', { id: id('options'), 'data-field': 'options', rows: Math.max(4, q.options.length + 1), class: 'plain' },
                q.options.join('\n')))),
        h('label', { class: 'inline' }, h('input', { type: 'checkbox', id: id('blank'), 'data-field': 'blank', checked: q.blank }),
            h('span', {}, t('qe.blank'))),
        h('div', {},
            h('button', { type: 'button', class: 'secondary', 'data-action': 'up', disabled: i === 0 }, t('qe.up')),
            h('button', { type: 'button', class: 'secondary', 'data-action': 'down', disabled: i === count - 1 }, t('qe.down')),
            h('button', { type: 'button', class: 'secondary', 'data-action': 'remove' }, t('qe.remove'))));
}

/** A question of the console's editor in the questions file's form (numbers as typed: `questionProblems` checks
 * them). Shows the fields of its method and threshold, and hides the others. */
function readQuestionEditor(fieldset) {
    const get = (name) => fieldset.querySelector(`[data-field="${name}"]`);
    const method = get('method').value;
    for (const part of fieldset.querySelectorAll('[data-method]')) part.hidden = !part.dataset.method.split(' ').includes(method);
    const kind = get('threshold').value;
    fieldset.querySelector('[data-fraction]').hidden = !['yes-and-no', 'ballots'].includes(kind);
    const q = { title: get('title').value.trim(), description: get('description').value.trim(), method };
    q.options = method === 'yes-no' ? [] : get('options').value.split('\n').map((line) => line.trim()).filter(Boolean);
    q.blank = get('blank').checked;
    if (method === 'choose') Object.assign(q, { min: Number(get('min').value), max: Number(get('max').value), seats: Number(get('seats').value) });
    if (method === 'rank') Object.assign(q, { seats: Number(get('rank-seats').value), rule: get('rule').value });
    if (method === 'yes-no') {
        q.threshold = ['yes-and-no', 'ballots'].includes(kind) ? `${get('fraction').value.trim()} of ${kind}` : kind;
        if (get('quorum').value.trim()) q.quorum = get('quorum').value.trim();
    }
    return q;
}

/** Whether `text` is a fraction N/D above 0 and at most 1, as a threshold or a quorum must be. */
function goodFraction(text) {
    const match = /^(\d+)\/(\d+)$/.exec(text ?? '');
    return Boolean(match) && Number(match[1]) > 0 && Number(match[1]) <= Number(match[2]);
}

/** What the server would refuse in a ballot of `questions` (Ledger/FORMAT.md §11.21, and a title and distinct
 * option names), each in words with its question's number; empty when it would take them. */
function questionProblems(questions) {
    if (questions.length === 0) return [t('qe.none')];
    if (questions.length > 64) return [t('qe.tooMany')];
    const problems = [];
    questions.forEach((q, i) => {
        const say = (key, values) => problems.push(t('questionProblem', { n: i + 1, problem: t(key, values) }));
        const whole = (value) => Number.isInteger(value) && value >= 1;
        const count = q.options.length;
        if (!q.title) say('qe.noTitle');
        const twice = q.options.find((name, k) => q.options.indexOf(name) !== k);
        if (twice) say('qe.twice', { option: twice });
        if (q.method === 'choose') {
            if (count < 1 || count > 256) say('qe.chooseOptions');
            if (!whole(q.min) || !whole(q.max) || q.min > q.max) say('qe.minMax');
            else if (q.max > count) say('qe.maxOptions', { max: q.max, count });
            if (!whole(q.seats) || q.seats > count) say('qe.chooseSeats', { count });
        } else if (q.method === 'rank') {
            if (count < 2 || count > 256) say('qe.rankOptions');
            if (!whole(q.seats) || q.seats >= count) say('qe.rankSeats', { count });
        } else {
            if (q.threshold.includes(' of ') && !goodFraction(q.threshold.split(' of ')[0])) say('qe.badFraction');
            if (q.quorum !== undefined && !goodFraction(q.quorum)) say('qe.badQuorum');
        }
    });
    return problems;
}

/** Questions read from the text of a questions file (`{"questions": [...]}`, or the list alone), each in the
 * editor's form; throws an Error that says what is wrong with the text. */
function parseQuestionsFile(text) {
    let parsed;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        throw new Error(t('qe.notJson', { message: error.message }));
    }
    const list = Array.isArray(parsed) ? parsed : parsed?.questions;
    if (!Array.isArray(list)) throw new Error(t('qe.noList'));
    return list.map((q, i) => {
        const refuse = (key) => { throw new Error(t('questionProblem', { n: i + 1, problem: t(key) })); };
        if (typeof q !== 'object' || q === null || !['choose', 'yes-no', 'rank'].includes(q.method)) refuse('qe.badMethod');
        // The editor shows these in selects: one it does not offer would be shown, and sent, as another.
        if (q.method === 'yes-no' && !/^(more-yes-than-no|majority-of-electorate|\d+\/\d+ of (yes-and-no|ballots))$/.test(q.threshold)) {
            refuse('qe.badThreshold');
        }
        if (q.method === 'rank' && !['scottish-stv', 'schulze'].includes(q.rule)) refuse('qe.badRule');
        return { ...newQuestion(), ...q, options: (q.options ?? []).map(String) };
    });
}

/** The console's editor of a ballot of questions, with its preview: `node` to show, `read()` the questions in the
 * questions file's form, `load(questions)` to start again from a list. The preview renders each question as the
 * booth does (`questionFieldset`), so the authority sees the voter's ballot; it can be tried but sends nothing. */
function questionsEditor(revoting) {
    let questions = [newQuestion()];
    const list = h('div', { id: 'questions-editor' });
    const preview = h('div', { id: 'questions-preview', class: 'preview' });
    const problems = h('div', { id: 'questions-problems', 'aria-live': 'polite' });
    const read = () => [...list.querySelectorAll('.question-editor')].map(readQuestionEditor);
    const showPreview = () => {
        questions = read();
        const found = questionProblems(questions);
        problems.replaceChildren(found.length
            ? h('ul', { class: 'alert' }, found.map((text) => h('li', {}, text))) : h('p', { class: 'ok' }, t('qe.fine')));
        preview.replaceChildren(...(revoting.checked ? [h('p', { class: 'help' }, t('revotingNote'))] : []),
            ...questions.map((q, i) => questionFieldset(q, i + 1, undefined, h('p', { class: 'note', 'aria-live': 'polite' }))));
    };
    /** Draws the editor from `questions`, then the preview; `focus` names a field to focus ("qe2-title"). */
    const draw = (focus) => {
        list.replaceChildren(...questions.map((q, i) => questionEditor(q, i, questions.length)));
        showPreview();
        if (focus) document.getElementById(focus)?.focus();
    };
    list.addEventListener('input', showPreview);
    list.addEventListener('change', showPreview);
    revoting.addEventListener('change', showPreview);
    list.addEventListener('click', (event) => {
        const action = event.target.closest('[data-action]')?.dataset.action;
        if (!action) return;
        questions = read();
        const i = Number(event.target.closest('.question-editor').dataset.index);
        if (action === 'remove') questions.splice(i, 1);
        else {
            const j = action === 'up' ? i - 1 : i + 1;
            [questions[i], questions[j]] = [questions[j], questions[i]];
        }
        const at = action === 'remove' ? Math.min(i, questions.length - 1) : action === 'up' ? i - 1 : i + 1;
        draw(questions.length ? `qe${at + 1}-title` : 'add-question');
    });
    const add = h('button', {
        type: 'button', class: 'secondary', id: 'add-question',
        onclick: () => { questions = [...read(), newQuestion()]; draw(`qe${questions.length}-title`); },
    }, t('qe.add'));
    const json = h('textarea', { id: 'questions-json', spellcheck: 'false', rows: 6, 'aria-describedby': 'questions-json-help' });
    const jsonError = h('div', { 'aria-live': 'polite' });
    const loadText = (text) => {
        try {
            questions = parseQuestionsFile(text);
            jsonError.replaceChildren();
            draw('qe1-title');
        } catch (error) {
            jsonError.replaceChildren(h('p', { class: 'alert', role: 'alert', id: 'questions-json-error' }, error.message));
        }
    };
    const file = h('input', {
        id: 'questions-file', type: 'file', accept: '.json,application/json',
        onchange: async () => {
            if (!file.files[0]) return;
            json.value = await file.files[0].text();
            loadText(json.value);
        },
    });
    draw();
    return {
        node: h('div', {}, list, add,
            h('details', {}, h('summary', {}, t('qe.json')),
                h('label', { for: 'questions-json' }, t('qe.jsonPaste')), json,
                h('p', { class: 'help', id: 'questions-json-help' }, t('qe.jsonHelp')),
                h('button', { type: 'button', class: 'secondary', id: 'load-questions-json', onclick: () => loadText(json.value) }, t('qe.jsonUse')),
                h('label', { for: 'questions-file' }, t('qe.jsonFile')), file, jsonError),
            h('h3', { id: 'questions-preview-title' }, t('qe.preview')),
            h('p', { class: 'help' }, t('qe.previewHelp')), problems, preview),
        read: () => { showPreview(); return questions; },
        load: (loaded) => { questions = loaded; draw(); },
    };
}

// MARK: Console: a voter list as the organisation keeps it

/** How many rows of a voter list the console shows before it is sent, and how many obvious refusals it lists. */
const PREVIEW_ROWS = 5;
const PREVIEW_REFUSALS = 5;
const MAX_WEIGHT = 1000000;

/** The fields of one line of a table (RFC 4180 quoting: a field in double quotes may hold the separator, and ""
 * is a quote in it), as the server reads them (VoterList.fields): line by line, so a quoted field that is not
 * closed on its line makes the line unreadable (null). */
function csvFields(line, separator) {
    const fields = [];
    let field = '';
    let quoted = false;
    let atStart = true;
    for (let i = 0; i < line.length; i += 1) {
        const c = line[i];
        if (quoted) {
            if (c !== '"') field += c;
            else if (line[i + 1] === '"') { field += '"'; i += 1; } else quoted = false;
        } else if (c === separator) {
            fields.push(field);
            field = '';
            atStart = true;
            continue;
        } else if (c === '"' && atStart && field.trim() === '') {
            quoted = true;
            field = '';
        } else {
            field += c;
        }
        atStart = atStart && /\s/.test(c);
    }
    if (quoted) return null;
    fields.push(field);
    return fields;
}

/** A voter list read in the browser before anything is sent: its text (UTF-8, the byte order mark dropped), the
 * separator the server will find (a tab if the header holds one, else a semicolon if it holds one and no comma,
 * else a comma), the header's names and the rows under it, each with its line number in the file. A file that is
 * not UTF-8, or empty, gives `problem` instead. */
async function readVoterFile(file) {
    if (!file) return null;
    let text;
    try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
    } catch {
        return { problem: t('csvNotUtf8', { file: file.name }) };
    }
    const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
    while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
    if (!lines.length) return { problem: t('csvEmpty', { file: file.name }) };
    const first = lines[0].replace(/^\uFEFF/, '');
    const separator = first.includes('\t') ? '\t' : first.includes(';') && !first.includes(',') ? ';' : ',';
    const header = (csvFields(first, separator) ?? [first]).map((name) => name.replace(/\uFEFF/g, '').trim());
    const rows = lines.slice(1).map((line, n) => ({ line: n + 2, fields: csvFields(line, separator) }))
        .filter((row) => !row.fields || row.fields.some((field) => field.trim() !== '')); // blank rows are skipped
    return { name: file.name, text, separator, header, rows };
}

/** The columns a header most likely means (numbers from 1; 0 for none): the identity named like identity, member,
 * voter, e-mail, id or phone (else the first of several columns; a single column not so named is a list of one
 * identity per line), the weight named like weight, shares or units, and the contact columns named like name,
 * e-mail, language and address. */
function guessColumns(header) {
    const plain = header.map((name) => name.toLowerCase().replace(/[\s\-_."']/g, ''));
    const find = (words) => {
        for (const word of words) {
            const n = plain.indexOf(word);
            if (n >= 0) return n + 1;
        }
        return 0;
    };
    const identity = find(['identity', 'voterid', 'memberid', 'member', 'membernumber', 'voter', 'email', 'mail',
        'emailaddress', 'id', 'phone', 'phonenumber', 'mobile'])
        || plain.findIndex((name) => name.includes('email')) + 1 || (header.length > 1 ? 1 : 0);
    // Contact columns, for the contact book that mail and letters read (an e-mail identity is also the address).
    const contact = find;
    return {
        identity, weight: find(['weight', 'weights', 'shares', 'units', 'votes']),
        name: contact(['name', 'fullname', 'membername', '이름', '성명']),
        email: contact(['email', 'mail', 'emailaddress', 'e-mail', '이메일']),
        language: contact(['language', 'lang', 'locale', '언어']),
        address: contact(['address', 'postaladdress', 'postal', '주소']),
        time_zone: contact(['timezone', 'tz', 'zone', '시간대']),
    };
}

/** Why the server will obviously refuse `row` with these columns (0-based; `weight` null for none), or null:
 * only what the console can see (the server decides, and may refuse more). */
function obviousRefusal(row, identity, weight, email = null) {
    if (!row.fields) return t('csvWhyQuote');
    for (const column of [identity, weight, email]) {
        if (column !== null && column >= row.fields.length) return t('csvWhyColumn', { n: column + 1 });
    }
    const voter = row.fields[identity].trim();
    if (!voter) return t('csvWhyEmpty');
    const ats = voter.split('@').length - 1;
    if (ats > 1) return t('csvWhyAt');
    if (!ats && [...voter].length > 64) return t('csvWhyLong');
    if (weight !== null) {
        const given = row.fields[weight].trim();
        if (!/^[0-9]+$/.test(given) || Number(given) < 1 || Number(given) > MAX_WEIGHT) return t('csvWhyWeight', { max: MAX_WEIGHT });
    }
    if (email !== null) {
        const address = row.fields[email].trim();
        if (address && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(address)) return t('csvWhyEmail');
    }
    return null;
}

/** The preview of a voter table: how many rows, its first rows in a table with the chosen columns marked, and the
 * first rows the server will obviously refuse. */
function voterTablePreview(list, identity, weight, contact = {}) {
    const kinds = [['identity', identity], ['weight', weight], ...['name', 'email', 'language', 'address', 'time_zone'].map((k) => [k, contact[k] ?? null])];
    const kindOf = (n) => kinds.find(([, column]) => column === n)?.[0];
    const marks = (n) => (kindOf(n) ? t(`csvMark.${kindOf(n)}`) : null);
    const chosen = (n) => (kindOf(n) ? `chosen ${kindOf(n)}` : null);
    const shown = list.rows.slice(0, PREVIEW_ROWS);
    const refused = list.rows.map((row) => ({ line: row.line, why: obviousRefusal(row, identity, weight, contact.email ?? null) }))
        .filter((row) => row.why);
    const separator = { '\t': t('csvTab'), ';': t('csvSemicolon'), ',': t('csvComma') }[list.separator];
    return [
        h('p', { id: 'voters-csv-count' }, plural('csvRows', list.rows.length, { separator })),
        list.rows.length ? h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'voters-csv-caption' },
            h('table', { id: 'voters-csv-table' },
                h('caption', { id: 'voters-csv-caption' }, t('csvCaption', { n: shown.length, file: list.name })),
                h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'number' }, t('csvLineHead')),
                    list.header.map((name, n) => h('th', { scope: 'col', class: chosen(n) },
                        name || t('csvUnnamed'), marks(n) ? h('span', { class: 'mark' }, marks(n)) : null)))),
                h('tbody', {}, shown.map((row) => h('tr', {},
                    h('td', { class: 'number' }, row.line),
                    row.fields ? list.header.map((_, n) => h('td', { class: chosen(n) }, row.fields[n] ?? ''))
                        : h('td', { colspan: list.header.length }, t('csvWhyQuote'))))))) : null,
        h('div', { id: 'voters-csv-refusals', class: refused.length ? 'warning' : null },
            h('p', {}, refused.length ? plural('csvObvious', refused.length) : t('csvObviousNone')),
            refused.length ? h('ul', {}, refused.slice(0, PREVIEW_REFUSALS).map((row) => h('li', {}, t('csvLine', { line: row.line, message: row.why })))) : null),
    ];
}

// MARK: Authority console

/** What the certify route's answer `made` certified for a place asking `questions`: the block, the turnout (members
 * and weight where voters carry weights) and each question's outcome, passed or not, or the elected by name. */
function certifiedQuestions(questions, made) {
    const outcome = (question, count) => {
        if (question.method === 'yes-no') return t(count.passed ? 'passed' : 'notPassed');
        const names = count.elected.map((k) => question.options[k - 1]);
        return `${t('electedList')} ${names.length ? names.join(', ') : t('noneElected')}`;
    };
    return [h('p', {}, t('certified', { height: made.height })),
        h('p', { id: 'certified-turnout' }, turnoutText(made.turnout)),
        h('dl', { class: 'answers', id: 'certified-outcomes' }, made.questions.flatMap((count, i) => [
            h('dt', {}, `${i + 1}. ${questions[i].title}`), h('dd', { 'data-question': i + 1 }, outcome(questions[i], count))]))];
}

/** The console; without an admin token, its sign-in form (with `message`, a refusal, above it). The token is checked
 * at sign-in (`GET admin/check`), so a wrong one is told at once rather than at the first action, losing a form. */
function authority(message) {
    if (!adminToken) {
        const input = h('input', { id: 'admin-token', type: 'password', autocomplete: 'off', 'aria-describedby': 'admin-help' });
        const error = message ? h('p', { class: 'alert', role: 'alert', id: 'sign-in-error' }, message) : null;
        show(title(t('authTitle')), error, h('form', {
            onsubmit: async (event) => {
                event.preventDefault();
                const typed = input.value.trim();
                if (!typed) return authority(t('badAdmin'));
                adminToken = typed;
                try {
                    await api('admin/check', { admin: true, text: true });
                } catch (refused) {
                    adminToken = null;
                    const why = refused.status === 401 || refused.status === 403 ? t('badAdmin') : problem(refused).textContent;
                    return authority(why);
                }
                authority();
            },
        }, h('label', { for: 'admin-token' }, t('adminToken')), input,
        h('p', { class: 'help', id: 'admin-help' }, t('adminHelp')), h('button', { type: 'submit' }, t('signIn'))));
        (error ? input : main.querySelector('h1')).focus();
        return;
    }
    const out = h('div', { id: 'console-outcome', 'aria-live': 'polite' });
    const say = (node) => out.replaceChildren(node);
    /** Runs an admin call and reports its outcome; a refused token signs out. A refusal is shown in `near` (next to
     * its form) if given, else with the outcomes. */
    const act = async (work, near) => {
        near?.replaceChildren();
        try {
            say(h('div', { class: 'ok', role: 'status' }, await work()));
            await loadPlaces();
        } catch (error) {
            if (error.status === 401 || error.status === 403) {
                adminToken = null;
                authority(t('badAdmin'));
                return;
            }
            const refusal = h('p', { class: 'alert', role: 'alert', tabindex: '-1' }, t('failed', { message: error.message }));
            if (!near) return say(refusal);
            near.replaceChildren(refusal);
            refusal.focus();
        }
    };
    const field = (id, label, attributes = {}) => [h('label', { for: id }, label), h('input', { id, type: 'text', ...attributes })];
    const value = (id) => document.getElementById(id).value.trim();
    const when = (id) => new Date(value(id)).toISOString();

    const headText = h('pre', { id: 'head' });
    const headTime = h('p', { id: 'head-time' });
    /** The signed head as served, and its `time` line (milliseconds since the epoch) as a reader's time with zone. */
    const loadHead = async () => {
        const head = await api('head', { text: true }).catch((e) => e.message);
        headText.textContent = head;
        const ms = /^time (\d+)$/m.exec(head)?.[1];
        headTime.textContent = ms ? t('headTime', { time: localTime(Number(ms)) }) : '';
    };

    const placeSelect = h('select', { id: 'manage-place', onchange: () => { showWeights(); showAmend(); showCancel(); showCertify(); loadCandidates(); loadVoterCounts(); } });
    const candidateSelect = h('select', { id: 'withdraw-candidate' });
    /** The place to select on the next reload (the one just created), else the current selection. */
    let wanted = null;
    /** The ids of the places that ask questions. */
    let asking = new Set();
    /** The ids of the token places that ask questions: only their voters may carry a weight. */
    let weighing = new Set();
    /** The places as last loaded, by id (as text, like the select's value). */
    let placesById = new Map();
    const weightFields = h('div', { id: 'voter-weight-fields', hidden: true },
        field('voter-weight', t('weight'), { type: 'number', min: 1, step: 1, inputmode: 'numeric', 'aria-describedby': 'voter-weight-help' }),
        h('p', { class: 'help', id: 'voter-weight-help' }, t('weightHelp')));
    const csvWeights = h('p', { class: 'help', id: 'voters-csv-weights', hidden: true }, t('csvWeights'));
    /** Shows the weight field and the CSV file's weight hint for a token place that asks questions, and the
     * candidate forms for a place with candidates; hides them otherwise. */
    const showWeights = () => {
        weightFields.hidden = csvWeights.hidden = !weighing.has(placeSelect.value);
        renderCsv();
        for (const id of ['register-candidate', 'withdraw']) {
            const form = document.getElementById(id);
            if (form) form.hidden = asking.has(placeSelect.value);
        }
    };
    const certifyButton = h('button', { type: 'submit' }, t('certifyButton'));
    const certifyState = h('p', { class: 'help', id: 'certify-state' });
    /** Offers to certify the selected place once its voting has ended and until its results are certified, and
     * says which of these it waits for (its tally's certified_height tells whether it is certified). */
    const showCertify = async () => {
        const place = placesById.get(placeSelect.value);
        const ended = place?.status === 'ended';
        certifyButton.disabled = !ended;
        certifyState.textContent = !place || ended ? ''
            : place.status === 'cancelled' ? t('certifyCancelled') : t('certifyAfter', { time: localTime(place.voting.end) });
        if (!ended) return;
        const height = (await api(`places/${place.id}/tally`)).certified_height;
        if (placesById.get(placeSelect.value) !== place) return; // another place was chosen meanwhile
        certifyButton.disabled = height !== null;
        certifyState.textContent = height !== null ? t('certifiedAt', { height }) : t('certifyReady');
    };
    const amendError = h('div', { id: 'amend-place-error' });
    const amendHelp = h('p', { class: 'help', id: 'amend-help' });
    const amendFields = h('fieldset', { 'aria-describedby': 'amend-help' }, h('legend', {}, t('amendPlace')), amendHelp,
        field('amend-name', t('name'), { required: true }), field('amend-description', t('description')),
        field('amend-vote-start', t('voteStart'), { type: 'datetime-local', required: true }),
        field('amend-vote-end', t('voteEnd'), { type: 'datetime-local', required: true }),
        amendError, h('button', { type: 'submit' }, t('amendButton')));
    /** An ISO time as a datetime-local field holds it (to the minute, in the browser's time zone). */
    const fieldTime = (iso) => {
        const ms = Date.parse(iso);
        return new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16);
    };
    /** Fills the correction form from the selected place as last loaded, and says what may be corrected: before
     * voting opens the window may move or shrink, once open only its end move later, once ended nothing. */
    const showAmend = () => {
        const form = document.getElementById('amend-place');
        const place = placesById.get(placeSelect.value);
        amendError.replaceChildren();
        if (!form) return;
        form.hidden = !place;
        if (!place) return;
        const fill = { 'amend-name': place.name, 'amend-description': place.description ?? '',
            'amend-vote-start': fieldTime(place.voting.start), 'amend-vote-end': fieldTime(place.voting.end) };
        for (const [id, text] of Object.entries(fill)) {
            const input = document.getElementById(id);
            input.value = input.dataset.was = text;
        }
        const ended = place.status === 'ended';
        const open = place.status === 'voting';
        const cancelled = place.status === 'cancelled';
        amendFields.disabled = ended || cancelled;
        document.getElementById('amend-vote-start').disabled = open || ended || cancelled;
        amendHelp.textContent = cancelled ? t('amendCancelled') : ended ? t('amendEnded') : open ? t('amendOpen') : t('amendBefore');
    };
    const cancelError = h('div', { id: 'cancel-place-error' });
    const cancelledNotice = h('p', { class: 'warning', id: 'place-cancelled', hidden: true });
    /** The forms that record something in a place other than its correction (which says why itself): a cancelled
     * place takes none of them (rule 11.30.5). */
    const placeForms = ['register-candidate', 'withdraw', 'authorize-one', 'reissue-one', 'withdraw-voter', 'authorize-csv'];
    /** Offers to cancel the selected place before its voting opens; for a cancelled one, says so (and why) under the
     * place menu, and disables the forms that would record something there, each saying why. */
    const showCancel = () => {
        const form = document.getElementById('cancel-place');
        const place = placesById.get(placeSelect.value);
        const cancelled = place?.status === 'cancelled';
        cancelError.replaceChildren();
        cancelledNotice.hidden = !cancelled;
        cancelledNotice.replaceChildren(...(cancelled ? [t('cancelledNotice'), ' ', cancelledNote(place)] : []));
        if (form) form.hidden = !place || !['upcoming', 'registration', 'waiting'].includes(place.status);
        for (const id of placeForms) {
            const fieldset = document.getElementById(id)?.querySelector('fieldset');
            if (!fieldset) continue;
            fieldset.disabled = cancelled;
            let why = fieldset.querySelector('.cancelled-why');
            if (!why) {
                why = h('p', { class: 'help cancelled-why' });
                fieldset.querySelector('legend').after(why);
            }
            why.hidden = !cancelled;
            why.textContent = cancelled ? t('cancelledForms') : '';
        }
    };
    const voterCounts = h('p', { id: 'voter-counts' });
    /** The selected place's roll as its tally counts it: voted of authorised, and how many were withdrawn. */
    const loadVoterCounts = async () => {
        const place = placeSelect.value;
        if (!place) return voterCounts.replaceChildren();
        const tally = await api(`places/${place}/tally`);
        if (placeSelect.value !== place) return; // another place was chosen meanwhile
        voterCounts.textContent = rollText(tally);
    };
    const withdrawVoterError = h('div', { id: 'withdraw-voter-error' });
    const loadPlaces = async () => {
        const chosen = wanted ?? placeSelect.value;
        wanted = null;
        const places = await api('places');
        asking = new Set(places.filter((p) => p.questions).map((p) => String(p.id)));
        weighing = new Set(places.filter((p) => p.questions && p.ballot !== 'anonymous').map((p) => String(p.id)));
        placesById = new Map(places.map((p) => [String(p.id), p]));
        placeSelect.replaceChildren(...places.map((p) => h('option', { value: p.id }, `${p.id}: ${p.name} (${t(`status.${p.status}`)})`)));
        if (chosen) placeSelect.value = chosen;
        showWeights();
        showAmend();
        showCancel();
        await Promise.all([showCertify(), loadCandidates(), loadVoterCounts()]);
        await loadHead();
    };
    const loadCandidates = async () => {
        if (!placeSelect.value) return candidateSelect.replaceChildren();
        const candidates = await api(`places/${placeSelect.value}/candidates`);
        candidateSelect.replaceChildren(...candidates.filter((c) => !c.withdrawn)
            .map((c) => h('option', { value: c.candidate }, `${c.candidate}: ${c.name}`)));
    };
    const csvInput = h('input', {
        id: 'voters-csv', type: 'file', accept: '.csv,.tsv,.txt,text/csv,text/tab-separated-values,text/plain',
        onchange: () => { csvReading = readVoterFile(csvInput.files[0]); csvReading.then(renderCsv); },
    });
    /** The chosen file as read (`readVoterFile`), and the promise of it while it is read. */
    let csvList = null;
    let csvReading = Promise.resolve(null);
    const csvError = h('div', { id: 'voters-csv-error' });
    const csvIdentity = h('select', { id: 'voters-csv-identity', onchange: () => renderCsv() });
    const csvWeight = h('select', { id: 'voters-csv-weight', onchange: () => renderCsv() });
    const csvWeightField = h('div', { id: 'voters-csv-weight-field' },
        h('label', { for: 'voters-csv-weight' }, t('csvWeightColumn')), csvWeight);
    const csvPreview = h('div', { id: 'voters-csv-preview' });
    // The contact columns: each member's name, e-mail, language, postal address and time zone go to the officer's
    // sealed contact book (what mail and letters read), never to the ledger.
    const contactKinds = ['name', 'email', 'language', 'address', 'time_zone'];
    const csvContact = Object.fromEntries(contactKinds.map((kind) => [kind, h('select', { id: `voters-csv-${kind}`, onchange: () => renderCsv() })]));
    const csvContactFields = h('fieldset', { id: 'voters-csv-contact', 'aria-describedby': 'voters-csv-contact-help' },
        h('legend', {}, t('csvContact')), h('p', { class: 'help', id: 'voters-csv-contact-help' }, t('csvContactHelp')),
        contactKinds.map((kind) => h('div', {}, h('label', { for: `voters-csv-${kind}` }, t(`csvColumn.${kind}`)), csvContact[kind])));
    const csvColumns = h('div', { id: 'voters-csv-columns', hidden: true },
        h('label', { for: 'voters-csv-identity' }, t('csvIdentityColumn')), csvIdentity, csvWeightField, csvContactFields, csvPreview);
    /** The column menus, preview, counts and obvious refusals of the chosen file (`list`, when newly read: the
     * menus are filled and their defaults guessed), for the place selected (a weight only where it may be). */
    const renderCsv = (list) => {
        if (list !== undefined) {
            csvList = list;
            csvError.replaceChildren();
            if (list?.problem) csvError.replaceChildren(h('p', { class: 'alert', role: 'alert' }, list.problem));
            const usable = list && !list.problem;
            csvColumns.hidden = !usable;
            if (!usable) return;
            const name = (column, n) => `${n + 1}. ${column || t('csvUnnamed')}`;
            const guess = guessColumns(list.header);
            csvIdentity.replaceChildren(
                ...list.header.map((column, n) => h('option', { value: n + 1 }, name(column, n))),
                h('option', { value: 'lines' }, t('csvLines')));
            csvIdentity.value = guess.identity ? String(guess.identity) : 'lines';
            csvWeight.replaceChildren(h('option', { value: '' }, t('csvNoWeight')),
                ...list.header.map((column, n) => h('option', { value: n + 1 }, name(column, n))));
            csvWeight.value = guess.weight ? String(guess.weight) : '';
            for (const kind of contactKinds) {
                csvContact[kind].replaceChildren(h('option', { value: '' }, t('csvNoColumn')),
                    ...list.header.map((column, n) => h('option', { value: n + 1 }, name(column, n))));
                csvContact[kind].value = guess[kind] ? String(guess[kind]) : '';
            }
        }
        if (!csvList || csvList.problem) return;
        const lines = csvIdentity.value === 'lines';
        const weighs = weighing.has(placeSelect.value);
        csvWeightField.hidden = lines || !weighs;
        csvContactFields.hidden = lines;
        if (lines) return csvPreview.replaceChildren(h('p', { class: 'help', id: 'voters-csv-count' }, t('csvLinesHelp')));
        const identity = Number(csvIdentity.value) - 1;
        const weight = weighs && csvWeight.value ? Number(csvWeight.value) - 1 : null;
        const contact = Object.fromEntries(contactKinds.map((kind) => [kind, csvContact[kind].value ? Number(csvContact[kind].value) - 1 : null]));
        csvPreview.replaceChildren(...voterTablePreview(csvList, identity, weight, contact));
    };
    /** Forgets the chosen file (after an upload, or when the form is reset). */
    const clearCsv = () => {
        csvInput.value = '';
        csvReading = Promise.resolve(null);
        renderCsv(null);
    };
    const revoting = h('input', { id: 'revoting', type: 'checkbox' });
    const editor = questionsEditor(revoting);
    const createError = h('div', { id: 'create-place-error' });
    const forCandidates = h('div', {}, field('max-candidates', t('maxCandidates'), { type: 'number', min: 1 }));
    // An anonymous place may hold its ballots and write them in batches (FORMAT.md §11.31): an interval, a size or both.
    const batchRule = h('fieldset', { id: 'batch-rule', hidden: true }, h('legend', {}, t('batchRule')),
        h('p', { class: 'help', id: 'batch-rule-help' }, t('batchRuleHelp')),
        field('batch-every', t('batchEvery'), { type: 'number', min: 1, max: 604800, step: 1, 'aria-describedby': 'batch-rule-help' }),
        field('batch-size', t('batchSize'), { type: 'number', min: 2, max: 1000000, step: 1, 'aria-describedby': 'batch-rule-help' }));
    /** The batch rule of the form, as the API takes it, or nothing (not anonymous, or neither field filled). */
    const batches = () => {
        if (!anonymous.checked) return {};
        const [every, size] = [value('batch-every'), value('batch-size')];
        if (!every && !size) return {};
        return { batches: { ...(every ? { interval_seconds: Number(every) } : {}), ...(size ? { size: Number(size) } : {}) } };
    };
    // An anonymous credential casts one ballot: no re-voting there (FORMAT.md §11.27).
    const anonymous = h('input', {
        id: 'anonymous-ballots', type: 'checkbox',
        onchange: () => {
            revoting.disabled = anonymous.checked;
            if (anonymous.checked) revoting.checked = false;
            batchRule.hidden = !anonymous.checked;
        },
    });
    const forQuestions = h('div', { id: 'ballot-of-questions', hidden: true },
        h('label', { class: 'inline' }, revoting, h('span', {}, t('revoting'))), editor.node);
    const asksQuestions = () => document.getElementById('kind-questions').checked;
    /** Shows the fields of what the new place asks (candidates, or questions), hides the others. */
    const showKind = () => {
        forCandidates.hidden = asksQuestions();
        forQuestions.hidden = !asksQuestions();
    };
    const kind = (value, checked) => h('label', { class: 'choice' },
        h('input', { type: 'radio', name: 'place-kind', id: `kind-${value}`, value, checked, onchange: showKind }),
        h('span', {}, t(`kind.${value}`)));

    show(title(t('authTitle')),
        h('button', { type: 'button', class: 'secondary', onclick: () => { adminToken = null; authority(); } }, t('signOut')),
        out,
        h('form', {
            id: 'create-place',
            oninput: () => createError.replaceChildren(), // an edit answers the refusal shown
            onsubmit: (event) => {
                event.preventDefault();
                const questions = asksQuestions() ? editor.read() : null;
                if (questions && questionProblems(questions).length) {
                    createError.replaceChildren(h('p', { class: 'alert', role: 'alert' }, t('qe.fixFirst')));
                    return document.getElementById('questions-problems').scrollIntoView({ block: 'center' });
                }
                act(async () => {
                    const max = value('max-candidates');
                    const created = await api('places', {
                        method: 'POST', admin: true, json: {
                            name: value('place-name'), description: value('place-description'),
                            registration: { start: when('reg-start'), end: when('reg-end') },
                            voting: { start: when('vote-start'), end: when('vote-end') },
                            results: document.getElementById('results-after-close').checked ? 'after-close' : 'live',
                            ballot: anonymous.checked ? 'anonymous' : 'token',
                            ...(questions ? { questions, revoting: revoting.checked } : max ? { max_candidates: Number(max) } : {}),
                            ...batches(),
                        },
                    });
                    wanted = String(created.place);
                    event.target.reset();
                    revoting.disabled = false;
                    batchRule.hidden = true;
                    editor.load([newQuestion()]);
                    showKind();
                    return t('created', { id: created.place });
                }, createError);
            },
        }, h('fieldset', {}, h('legend', {}, t('createPlace')),
            field('place-name', t('name'), { required: true }), field('place-description', t('description')),
            field('reg-start', t('regStart'), { type: 'datetime-local', required: true }),
            field('reg-end', t('regEnd'), { type: 'datetime-local', required: true }),
            field('vote-start', t('voteStart'), { type: 'datetime-local', required: true }),
            field('vote-end', t('voteEnd'), { type: 'datetime-local', required: true }),
            h('label', { class: 'inline' }, h('input', { id: 'results-after-close', type: 'checkbox' }),
                h('span', {}, t('resultsAfterClose'))),
            h('fieldset', {}, h('legend', {}, t('placeAsks')), kind('candidates', true), kind('questions', false)),
            h('label', { class: 'inline' }, anonymous, h('span', {}, t('anonymousBallots'))), batchRule,
            forCandidates, forQuestions, createError,
            h('button', { type: 'submit' }, t('create')))),
        h('h2', {}, t('managePlace')),
        h('label', { for: 'manage-place' }, t('place')), placeSelect, cancelledNotice,
        h('form', {
            id: 'amend-place',
            hidden: true,
            oninput: () => amendError.replaceChildren(),
            onsubmit: (event) => {
                event.preventDefault();
                const place = placesById.get(placeSelect.value);
                const changed = (id) => !document.getElementById(id).disabled && value(id) !== document.getElementById(id).dataset.was.trim();
                const json = {};
                if (changed('amend-name')) json.name = value('amend-name');
                if (changed('amend-description')) json.description = value('amend-description');
                if (changed('amend-vote-start') || changed('amend-vote-end')) {
                    // The voting window goes whole; a time not edited goes as the server gave it (to the second).
                    json.voting = {
                        start: changed('amend-vote-start') ? when('amend-vote-start') : place.voting.start,
                        end: changed('amend-vote-end') ? when('amend-vote-end') : place.voting.end,
                    };
                }
                if (!Object.keys(json).length) {
                    return amendError.replaceChildren(h('p', { class: 'alert', role: 'alert' }, t('amendNothing')));
                }
                act(async () => {
                    const made = await api(`places/${place.id}/amend`, { method: 'POST', admin: true, json });
                    return t('amendDone', { id: made.place, height: made.recorded.height });
                }, amendError);
            },
        }, amendFields),
        h('form', {
            id: 'cancel-place',
            hidden: true,
            oninput: () => cancelError.replaceChildren(),
            onsubmit: (event) => {
                event.preventDefault();
                const place = placesById.get(placeSelect.value);
                act(async () => {
                    const reason = value('cancel-reason');
                    const made = await api(`places/${place.id}/cancel`, { method: 'POST', admin: true, json: reason ? { reason } : {} });
                    event.target.reset();
                    return t('cancelDone', { id: made.place, height: made.height });
                }, cancelError);
            },
        }, h('fieldset', { 'aria-describedby': 'cancel-help' }, h('legend', {}, t('cancelPlace')),
            h('p', { class: 'help', id: 'cancel-help' }, t('cancelHelp')),
            field('cancel-reason', t('cancelReason'), { autocomplete: 'off' }),
            h('label', { class: 'inline' }, h('input', { id: 'cancel-confirm', type: 'checkbox', required: true }),
                h('span', {}, t('cancelConfirm'))),
            cancelError, h('button', { type: 'submit', class: 'danger' }, t('cancelButton')))),
        h('form', {
            id: 'register-candidate',
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const made = await api(`places/${placeSelect.value}/candidates`, {
                        method: 'POST', admin: true, json: { name: value('candidate-name'), pledge: value('candidate-pledge') },
                    });
                    event.target.reset();
                    return t('registered', { id: made.candidate });
                });
            },
        }, h('fieldset', {}, h('legend', {}, t('registerCandidate')),
            field('candidate-name', t('name'), { required: true }), field('candidate-pledge', t('pledge')),
            h('button', { type: 'submit' }, t('register')))),
        h('form', {
            id: 'withdraw',
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const id = candidateSelect.value;
                    await api(`places/${placeSelect.value}/candidates/${id}/withdraw`, { method: 'POST', admin: true });
                    return t('withdrawnDone', { id });
                });
            },
        }, h('fieldset', {}, h('legend', {}, t('withdrawCandidate')),
            h('label', { for: 'withdraw-candidate' }, t('candidate')), candidateSelect,
            h('button', { type: 'submit' }, t('withdraw')))),
        h('h3', {}, t('votersTitle')), voterCounts,
        h('p', {}, h('button', { type: 'button', class: 'secondary', id: 'open-desk', onclick: () => { location.hash = `#/desk/${placeSelect.value}`; } }, t('deskOpen'))),
        h('form', {
            id: 'authorize-one',
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const weight = weightFields.hidden ? '' : value('voter-weight');
                    const made = await api(`places/${placeSelect.value}/voters`, {
                        method: 'POST', admin: true, json: { voter: value('voter-identity'), ...(weight ? { weight: Number(weight) } : {}) },
                    });
                    event.target.reset();
                    return h('span', {}, t('tokenOnce', { token: '' }), h('span', { class: 'token', id: 'issued-token' }, made.token));
                });
            },
        }, h('fieldset', {}, h('legend', {}, t('authorizeOne')),
            field('voter-identity', t('voter'), { required: true, autocomplete: 'off' }), weightFields,
            h('button', { type: 'submit' }, t('authorize')))),
        h('form', {
            id: 'reissue-one',
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const made = await api(`places/${placeSelect.value}/voters/reissue`, {
                        method: 'POST', admin: true, json: { voter: value('reissue-identity') },
                    });
                    event.target.reset();
                    return h('span', {}, t('reissuedOnce', { token: '' }), h('span', { class: 'token', id: 'reissued-token' }, made.token));
                });
            },
        }, h('fieldset', {}, h('legend', {}, t('reissueOne')),
            h('p', {}, t('reissueHelp')),
            field('reissue-identity', t('voter'), { required: true, autocomplete: 'off' }),
            h('button', { type: 'submit' }, t('reissue')))),
        h('form', {
            id: 'withdraw-voter',
            oninput: () => withdrawVoterError.replaceChildren(),
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const made = await api(`places/${placeSelect.value}/voters/withdraw`, {
                        method: 'POST', admin: true, json: { identity: value('withdraw-identity') },
                    });
                    event.target.reset();
                    return t('voterWithdrawnDone', { id: made.place, height: made.height, authorized: made.authorized });
                }, withdrawVoterError);
            },
        }, h('fieldset', { 'aria-describedby': 'withdraw-voter-help' }, h('legend', {}, t('withdrawVoter')),
            h('p', { class: 'help', id: 'withdraw-voter-help' }, t('withdrawVoterHelp')),
            field('withdraw-identity', t('voter'), { required: true, autocomplete: 'off' }),
            h('label', { class: 'inline' }, h('input', { id: 'withdraw-confirm', type: 'checkbox', required: true }),
                h('span', {}, t('withdrawVoterConfirm'))),
            withdrawVoterError, h('button', { type: 'submit', class: 'danger' }, t('withdrawVoterButton')))),
        h('form', {
            id: 'authorize-csv',
            onsubmit: (event) => {
                event.preventDefault();
                out.replaceChildren(); // an earlier upload's outcome is not this one's
                act(async () => {
                    const list = await csvReading;
                    if (!list) throw new APIError(400, 'bad_request', t('csvChooseFirst'));
                    if (list.problem) throw new APIError(400, 'bad_request', list.problem);
                    const place = placeSelect.value;
                    // The columns by number (1 up), not by name: a header may name two columns alike.
                    const query = csvIdentity.value === 'lines' ? '' : `?identity_column=${csvIdentity.value}`
                        + (!csvWeightField.hidden && csvWeight.value ? `&weight_column=${csvWeight.value}` : '')
                        + (csvIdentity.value === 'lines' ? '' : contactKinds.filter((kind) => csvContact[kind].value)
                            .map((kind) => `&${kind}_column=${csvContact[kind].value}`).join(''));
                    // A refusal of the whole list (400, or 422 nothing_authorized) throws here: no tokens file.
                    const made = await api(`places/${place}/voters${query}`, { method: 'POST', admin: true, csv: list.text });
                    if (!made.tokens?.length) throw new APIError(422, 'nothing_authorized', t('csvNothing'));
                    const filename = `tokens-place-${place}.csv`;
                    const quote = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
                    download(['voter,token', ...made.tokens.map((r) => `${quote(r.voter)},${r.token}`)].join('\n') + '\n', filename, 'text/csv');
                    event.target.reset();
                    clearCsv();
                    const rejected = made.rejected ?? [];
                    return h('span', {}, plural('csvDone', made.tokens.length, { file: filename }), ' ',
                        plural('csvRefused', made.rejected_total ?? rejected.length),
                        rejected.length ? h('ul', {}, rejected.slice(0, 20).map((r) => h('li', {}, t('csvLine', { line: r.line, message: r.message })))) : null);
                }, csvError);
            },
        }, h('fieldset', {}, h('legend', {}, t('authorizeCsv')),
            h('label', { for: 'voters-csv' }, t('csvFile')), csvInput, csvWeights, csvColumns, csvError,
            h('button', { type: 'submit' }, t('upload')))),
        h('form', {
            id: 'certify',
            onsubmit: (event) => {
                event.preventDefault();
                act(async () => {
                    const place = placesById.get(placeSelect.value);
                    const made = await api(`places/${place.id}/certify`, { method: 'POST', admin: true });
                    return place.questions ? certifiedQuestions(place.questions, made) : t('certified', { height: made.height });
                });
            },
        }, h('fieldset', {}, h('legend', {}, t('certify')), certifyState, certifyButton)),
        h('h2', {}, t('headTitle')), headTime, headText,
        h('button', { type: 'button', class: 'secondary', onclick: loadHead }, t('refresh')));
    main.querySelector('h1').focus();
    loadPlaces().catch((error) => say(problem(error)));
}

// MARK: Officer's desk

/** A time as the desk's chart labels it: day and time of day in the viewer's zone. */
function shortTime(iso) {
    return new Date(iso).toLocaleString(currentLanguage(), { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** The turnout over time as SVG, drawn here: the share of the electorate that had voted by the end of each bucket,
 * a line over a filled area, 0, 50 and 100 % on the left, the window's first and last times below; the table under
 * it carries the same numbers for those who do not see the picture. */
function turnoutChart(desk) {
    const buckets = desk.timeline.buckets;
    if (!buckets.length) return [h('p', { id: 'desk-chart-empty', class: 'help' }, t('deskNoTimeline'))];
    const width = chartWidth();
    const height = 220;
    const left = 48;
    const top = 10;
    const plotW = width - left - 10;
    const plotH = height - top - 30;
    const whole = Math.max(desk.authorized, buckets[buckets.length - 1].total, 1);
    const x = (i) => left + (plotW * i) / buckets.length;
    const y = (total) => top + plotH * (1 - total / whole);
    const points = [[x(0), y(0)], ...buckets.map((b, i) => [x(i + 1), y(b.total)])];
    const text = (pairs) => pairs.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ');
    const svg = h('svg', {
        class: 'chart turnout-chart', id: 'desk-chart', viewBox: `0 0 ${width} ${height}`, role: 'img',
        'aria-labelledby': 'desk-chart-title', 'data-total': buckets[buckets.length - 1].total, 'data-buckets': buckets.length,
    }, h('title', { id: 'desk-chart-title' }, t('deskChart', { percent: percentText(desk.voted, desk.authorized) })));
    for (const share of [0, 0.5, 1]) {
        const gy = y(share * whole);
        svg.append(h('line', { class: 'grid', x1: left, x2: left + plotW, y1: gy, y2: gy }),
            h('text', { class: 'axis', x: left - 6, y: gy + 5, 'text-anchor': 'end' }, `${Math.round(share * 100)}%`));
    }
    svg.append(
        h('polygon', { class: 'area', points: text([...points, [x(buckets.length), y(0)]]) }),
        h('polyline', { class: 'line', points: text(points) }),
        ...buckets.map((b, i) => h('circle', { class: 'point', cx: x(i + 1), cy: y(b.total), r: 2.5, 'data-total': b.total })),
        h('text', { class: 'axis', x: left, y: height - 8 }, shortTime(buckets[0].start)),
        h('text', { class: 'axis', x: left + plotW, y: height - 8, 'text-anchor': 'end' }, shortTime(desk.now < desk.voting_end ? desk.now : desk.voting_end)));
    const table = h('details', { id: 'desk-chart-table' }, h('summary', {}, t('deskChartTable', { minutes: desk.timeline.bucket_seconds / 60 })),
        h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('deskFrom')), h('th', { scope: 'col' }, t('deskVotes')),
            h('th', { scope: 'col' }, t('deskTotal')))),
        h('tbody', {}, buckets.map((b) => h('tr', {}, h('th', { scope: 'row' }, shortTime(b.start)),
            h('td', { class: 'number' }, b.votes), h('td', { class: 'number' }, b.total))))));
    return [svg, table];
}

/** `nodes` without the absent ones (null), for `replaceChildren`, which would show them as text. */
function present(...nodes) {
    return nodes.filter((node) => node !== null && node !== undefined && node !== false);
}

/** A `<dl>` of figures: [label, value, id] rows (a row whose value is null is left out). */
function figureList(id, rows) {
    return h('dl', { class: 'figures', id }, rows.filter(([, v]) => v !== null && v !== undefined)
        .flatMap(([label, v, key]) => [h('dt', {}, label), h('dd', { id: key }, v)]));
}

/** The officer's desk for place `id` (admin): the counts from the server's own ledger, turnout over time, the mail
 * figures, and the mail actions with their progress (polled until the mailing ends). */
async function desk(id) {
    if (!adminToken) return authority();
    const heading = h('h1', { tabindex: '-1' });
    const figures = h('div', { id: 'desk-figures' });
    const timeline = h('div', { id: 'desk-timeline' });
    const mail = h('div', { id: 'desk-mail' });
    const progress = h('div', { id: 'desk-progress', 'aria-live': 'polite' });
    const mailError = h('div', { id: 'desk-mail-error' });
    const invite = h('button', { type: 'button', id: 'desk-invite', onclick: () => start('invitation') }, t('deskInvite'));
    const remind = h('button', { type: 'button', id: 'desk-remind', onclick: () => start('reminder') }, t('deskRemind'));
    const signOut = () => { adminToken = null; authority(t('badAdmin')); };
    const showProgress = (m) => {
        const running = m?.state === 'running';
        invite.disabled = remind.disabled = running;
        if (!m || m.state === 'idle') return progress.replaceChildren();
        const done = m.sent + m.failed;
        progress.dataset.state = m.state;
        progress.replaceChildren(...present(
            h('progress', { id: 'desk-progress-bar', max: Math.max(m.total, 1), value: m.state === 'running' ? done : Math.max(m.total, 1) }),
            h('p', { id: 'desk-progress-text' }, t(`deskMail.${m.state}`, {
                kind: t(`deskKind.${m.kind}`), done, total: m.total, sent: m.sent, failed: m.failed, skipped: m.skipped,
            })),
            m.without_address ? h('p', { class: 'help' }, plural('deskWithoutAddress', m.without_address)) : null,
            m.error ? h('p', { class: 'alert', role: 'alert' }, m.error) : null));
    };
    const load = async () => {
        let d;
        try {
            d = await api(`admin/places/${id}/desk`, { admin: true });
        } catch (error) {
            if (error.status === 401 || error.status === 403) return signOut();
            throw error;
        }
        heading.textContent = t('deskTitle', { place: d.name });
        document.title = `${heading.textContent} · VoteLedger`;
        figures.replaceChildren(...present(figureList('desk-counts', [
            [t('deskAuthorized'), d.authorized, 'desk-authorized'],
            [t('deskWithdrawn'), d.withdrawn, 'desk-withdrawn'],
            [t('deskIssued'), d.anonymous ? d.issued : null, 'desk-issued'],
            [t('deskVoted'), d.voted, 'desk-voted'],
            [t('deskTurnout'), percentText(d.voted, d.authorized), 'desk-turnout'],
            [t('voting'), t('window', { start: localTime(d.voting_start), end: localTime(d.voting_end) }), 'desk-window'],
        ]), d.cancelled ? h('p', { class: 'warning' }, t('cancelledState')) : null));
        timeline.replaceChildren(...turnoutChart(d));
        const failed = (c) => c.refused + c.deferred + c.failed;
        mail.replaceChildren(...present(d.mail ? figureList('desk-mail-figures', [
            [t('deskInBook'), d.mail.in_contact_book, 'desk-in-book'],
            [t('deskWithoutEmail'), d.mail.without_email, 'desk-without-email'],
            [t('deskInvitations'), t('deskSentFailed', { sent: d.mail.invitations.sent, failed: failed(d.mail.invitations) }), 'desk-invitations'],
            [t('deskNotMailed'), d.mail.not_mailed, 'desk-not-mailed'],
            [t('deskReminders'), t('deskSentFailed', { sent: d.mail.reminders.sent, failed: failed(d.mail.reminders) }), 'desk-reminders'],
            [t('deskLastReminder'), d.mail.last_reminder ? localTime(d.mail.last_reminder) : t('deskNever'), 'desk-last-reminder'],
        ]) : h('p', { class: 'help', id: 'desk-no-book' }, t('deskNoBook')),
        d.mail_action ? null : h('p', { class: 'help', id: 'desk-no-relay' }, t('deskNoRelay'))));
        showProgress(d.mailing.state === 'idle' ? null : d.mailing);
        if (d.mailing.state === 'running') poll();
        return d;
    };
    let polling = false;
    const poll = () => {
        if (polling) return;
        polling = true;
        const timer = setInterval(async () => {
            const m = await api('admin/mail', { admin: true }).catch(() => null);
            if (!m) return;
            showProgress(m);
            if (m.state === 'running') return;
            clearInterval(timer);
            polling = false;
            await load().catch(() => {});
        }, 1000);
        stops.push(() => clearInterval(timer));
    };
    const start = async (kind) => {
        mailError.replaceChildren();
        try {
            showProgress(await api(`admin/places/${id}/mail`, { method: 'POST', admin: true, json: { kind } }));
            poll();
        } catch (error) {
            if (error.status === 401 || error.status === 403) return signOut();
            const refusal = h('p', { class: 'alert', role: 'alert', tabindex: '-1' }, t('failed', { message: error.message }));
            mailError.replaceChildren(refusal);
            refusal.focus();
        }
    };
    show(heading, h('p', {}, h('a', { href: '#/authority' }, t('deskBack'))),
        h('h2', {}, t('deskCounts')), figures,
        h('h2', {}, t('deskOverTime')), timeline,
        h('h2', {}, t('deskMailTitle')), mail,
        h('div', { class: 'actions' }, invite, ' ', remind), h('p', { class: 'help' }, t('deskMailHelp')), mailError, progress);
    await load();
    every(30000, () => { if (!polling) load().catch(() => {}); });
}

// MARK: - Router

const routes = [
    [/^#?\/?$/, home, 'home'],
    [/^#\/place\/(\d+)$/, placePage, 'home'],
    [/^#\/booth$/, () => pickPlace(t('booth'), t('boothPick'), 'booth', ['voting'], t('noVoting')), 'booth'],
    [/^#\/booth\/(\d+)(?:\?t=([A-Za-z2-7-]*))?$/, booth, 'booth'],
    [/^#\/results$/, () => pickPlace(t('results'), t('resultsPick'), 'results', ['voting', 'ended', 'waiting'], t('noPlaces')), 'results'],
    [/^#\/results\/(\d+)$/, results, 'results'],
    [/^#\/audit$/, auditPage, 'audit'],
    [/^#\/authority$/, authority, 'authority'],
    [/^#\/desk\/(\d+)$/, desk, 'authority'],
];

async function route() {
    for (const stop of stops) stop();
    stops = [];
    const hash = location.hash || '#/';
    const [, page, section] = routes.find(([pattern]) => pattern.test(hash)) ?? routes[0];
    const match = routes.find(([pattern]) => pattern.test(hash))?.[0].exec(hash) ?? [];
    for (const link of document.querySelectorAll('#nav a')) {
        if (link.dataset.text === section) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
    }
    main.setAttribute('aria-busy', 'true');
    delete main.dataset.route;
    try {
        await page(...match.slice(1));
        const heading = main.querySelector('h1');
        if (heading && document.activeElement === document.body) heading.focus();
    } catch (error) {
        show(title(t('app')), problem(error));
    }
    // The page on screen is the one this hash asked for (tests and assistive technology wait for this).
    main.removeAttribute('aria-busy');
    main.dataset.route = hash.replace(/\?t=.*$/, '');
}

function translateChrome() {
    for (const node of document.querySelectorAll('[data-text]')) node.textContent = t(node.dataset.text);
    document.getElementById('nav').setAttribute('aria-label', t('nav'));
}

const languageSelect = document.getElementById('language');
languageSelect.replaceChildren(...Object.entries(languages).map(([code, name]) => h('option', { value: code, lang: code }, name)));
setLanguage(currentLanguage());
languageSelect.value = currentLanguage();
languageSelect.addEventListener('change', () => {
    setLanguage(languageSelect.value, { remember: true });
    translateChrome();
    route();
});
translateChrome();
window.addEventListener('hashchange', route);
route();
