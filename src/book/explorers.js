// The two explorers of chapter 3, computed in the page: a warp's addresses over the 32-byte
// sectors and 128-byte lines they touch (the model of src/coalescing/sectors.rs), and a warp's
// shared-memory words over the 32 banks (src/coalescing/banks.rs). A page places one with
// <div class="explorer" data-explorer="sectors"></div> (or "banks"); the book's browser test
// sets their inputs and checks every number they show against those Rust models.
(function () {
    'use strict';

    const WARP_SIZE = 32;
    const SECTOR_BYTES = 32;
    const LINE_BYTES = 128;
    const BANKS = 32;
    const SVG_NS = 'http://www.w3.org/2000/svg';

    // ---- The models, as the Rust functions compute them ----

    // sectors::Access::strided(elem_bytes, stride, offset).warp_addresses(0): lane l accesses
    // element offset + l × stride of an array that starts at byte 0 (allocations are
    // 256-byte aligned, so offsets decide sectors and lines as addresses do).
    function stridedAddresses(elemBytes, stride, offset) {
        const addresses = [];
        for (let lane = 0; lane < WARP_SIZE; lane++) {
            addresses.push((offset + lane * stride) * elemBytes);
        }
        return addresses;
    }

    // sectors::footprint: every sector holding a requested byte, and the lines of those
    // sectors, each counted once however many lanes ask for it.
    function footprint(addresses, bytesPerLane) {
        const sectors = new Set();
        for (const a of addresses) {
            const last = Math.floor((a + bytesPerLane - 1) / SECTOR_BYTES);
            for (let s = Math.floor(a / SECTOR_BYTES); s <= last; s++) sectors.add(s);
        }
        const lines = new Set();
        for (const s of sectors) lines.add(Math.floor((s * SECTOR_BYTES) / LINE_BYTES));
        const requested = addresses.length * bytesPerLane;
        return {
            requested: requested,
            sectors: sectors,
            lines: Array.from(lines).sort((x, y) => x - y),
            moved: sectors.size * SECTOR_BYTES,
            efficiency: requested / (sectors.size * SECTOR_BYTES),
        };
    }

    // banks::column_read_words and banks::row_read_words: lane l reads tile[l][index] or
    // tile[index][l] of a tile stored row after row, rowWords 4-byte words per row.
    function tileWords(rowWords, access, index) {
        const words = [];
        for (let lane = 0; lane < WARP_SIZE; lane++) {
            words.push(access === 'column' ? lane * rowWords + index : index * rowWords + lane);
        }
        return words;
    }

    // banks::conflict_degree: the passes are the most distinct words any one bank holds;
    // lanes reading the same word share its pass. `passes[bank]` lists that bank's distinct
    // words in lane order, the order in which the drawing stacks them.
    function bankPasses(words) {
        const passes = [];
        for (let b = 0; b < BANKS; b++) passes.push([]);
        for (const w of words) {
            const bank = passes[w % BANKS];
            if (!bank.includes(w)) bank.push(w);
        }
        return {
            passes: passes,
            degree: Math.max(...passes.map((p) => p.length)),
        };
    }

    // ---- Elements ----

    function html(tag, attributes, text) {
        const e = document.createElement(tag);
        for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
        if (text !== undefined) e.textContent = text;
        return e;
    }

    function svg(tag, attributes, text) {
        const e = document.createElementNS(SVG_NS, tag);
        for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
        if (text !== undefined) e.textContent = text;
        return e;
    }

    // A labelled control: the label's text, the control, and the unit after it.
    function field(form, text, control, unit) {
        const label = html('label', {}, text + ' ');
        label.appendChild(control);
        if (unit) label.appendChild(document.createTextNode(' ' + unit));
        form.appendChild(label);
        return control;
    }

    function numberInput(name, min, max, value) {
        return html('input', {
            type: 'number', name: name, min: min, max: max, step: 1, value: value,
        });
    }

    function choice(name, options, selected) {
        const s = html('select', { name: name });
        for (const [value, text] of options) {
            const o = html('option', { value: value }, text);
            if (value === String(selected)) o.selected = true;
            s.appendChild(o);
        }
        return s;
    }

    // A whole number from min to max typed into `input`, or null with a message saying why not.
    function whole(input, what, problems) {
        const text = input.value.trim();
        const min = Number(input.min), max = Number(input.max);
        const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
        if (!(n >= min && n <= max)) {
            problems.push(what + ': a whole number from ' + min + ' to ' + max);
            return null;
        }
        return n;
    }

    // The numbers under a drawing: one <output> per quantity, each with the words after it.
    function numbers(root, rows) {
        const list = html('dl', { class: 'explorer-numbers' });
        const outputs = {};
        for (const [quantity, term] of rows) {
            list.appendChild(html('dt', {}, term));
            const dd = html('dd');
            const value = html('output', { 'data-quantity': quantity });
            const note = html('span', { class: 'explorer-note' });
            dd.appendChild(value);
            dd.appendChild(note);
            outputs[quantity] = { value: value, note: note };
            list.appendChild(dd);
        }
        root.appendChild(list);
        return outputs;
    }

    function show(outputs, values) {
        for (const [quantity, out] of Object.entries(outputs)) {
            const [value, note] = values ? values[quantity] : ['–', ''];
            out.value.textContent = value;
            out.note.textContent = note;
        }
    }

    // Estimated width of a label at the drawings' 11-px digits and letters.
    function labelWidth(text) {
        return text.length * 6.5;
    }

    // ---- Explorer (a): sectors and lines ----

    const LINE_LABEL_W = 56; // left column: the byte address where each line starts
    const BYTE_PX = 5; // one byte of a line, so that a line is 640 px wide
    const SECTOR_ROW_H = 18;
    const LANE_LABEL_H = 14;
    const ROW_H = SECTOR_ROW_H + LANE_LABEL_H + 4;
    const SKIP_H = 12; // extra space where the touched lines are not neighbours

    function drawSectors(addresses, bytes, fp) {
        const width = LINE_LABEL_W + LINE_BYTES * BYTE_PX + 4;
        let y = 18;
        const rowTop = new Map();
        fp.lines.forEach((line, i) => {
            if (i > 0 && line !== fp.lines[i - 1] + 1) y += SKIP_H;
            rowTop.set(line, y);
            y += ROW_H;
        });
        const height = y;
        const figure = svg('svg', {
            viewBox: '0 0 ' + width + ' ' + height,
            width: width,
            height: height,
            role: 'img',
            'aria-label': 'the warp\'s 32 lanes over the ' + fp.sectors.size
                + ' sectors and ' + fp.lines.length + ' lines they touch',
        });
        // The column of line addresses, and byte offsets within a line over its four sectors.
        figure.appendChild(svg('text', {
            x: LINE_LABEL_W - 6, y: 12, 'text-anchor': 'end', class: 'explorer-muted',
        }, 'byte'));
        for (let s = 0; s < LINE_BYTES / SECTOR_BYTES; s++) {
            figure.appendChild(svg('text', {
                x: LINE_LABEL_W + s * SECTOR_BYTES * BYTE_PX + 2, y: 12, class: 'explorer-muted',
            }, '+' + s * SECTOR_BYTES));
        }
        for (const line of fp.lines) {
            const top = rowTop.get(line);
            const row = svg('g', { class: 'explorer-line', 'data-line': line });
            row.appendChild(svg('text', {
                x: LINE_LABEL_W - 6, y: top + 13, 'text-anchor': 'end',
            }, String(line * LINE_BYTES)));
            for (let s = 0; s < LINE_BYTES / SECTOR_BYTES; s++) {
                const sector = line * (LINE_BYTES / SECTOR_BYTES) + s;
                const touched = fp.sectors.has(sector);
                const r = svg('rect', {
                    x: LINE_LABEL_W + s * SECTOR_BYTES * BYTE_PX + 0.5,
                    y: top + 0.5,
                    width: SECTOR_BYTES * BYTE_PX - 1,
                    height: SECTOR_ROW_H - 1,
                    class: touched ? 'explorer-sector explorer-touched' : 'explorer-sector',
                });
                r.appendChild(svg('title', {}, 'sector ' + sector + (touched ? ', moved' : ', not moved')));
                row.appendChild(r);
            }
            figure.appendChild(row);
        }
        // Each lane's bytes, split where they cross a line (no element of 1 to 16 bytes at an
        // aligned address does, but the model allows it); a lane number under the lane where
        // it fits beside the one before.
        const labelEnds = new Map();
        addresses.forEach((a, lane) => {
            let start = a;
            const end = a + bytes;
            while (start < end) {
                const line = Math.floor(start / LINE_BYTES);
                const stop = Math.min(end, (line + 1) * LINE_BYTES);
                const top = rowTop.get(line);
                const x = LINE_LABEL_W + (start - line * LINE_BYTES) * BYTE_PX;
                const w = (stop - start) * BYTE_PX;
                const r = svg('rect', {
                    x: x + 0.5, y: top + 3, width: Math.max(w - 1, 1), height: SECTOR_ROW_H - 6,
                    class: 'explorer-lane', 'data-lane': lane,
                });
                r.appendChild(svg('title', {}, 'lane ' + lane + ': bytes ' + a + '–' + (end - 1)));
                figure.appendChild(r);
                if (start === a) {
                    const text = String(lane);
                    const centre = x + w / 2;
                    const left = centre - labelWidth(text) / 2;
                    const previousEnd = labelEnds.has(line) ? labelEnds.get(line) : -Infinity;
                    if (left >= previousEnd + 2) {
                        figure.appendChild(svg('text', {
                            x: centre, y: top + SECTOR_ROW_H + 11, 'text-anchor': 'middle',
                            class: 'explorer-muted',
                        }, text));
                        labelEnds.set(line, left + labelWidth(text));
                    }
                }
                start = stop;
            }
        });
        return figure;
    }

    function sectorsExplorer(root) {
        const form = html('form', { class: 'explorer-form' });
        const elem = field(form, 'element size', choice('elem_bytes',
            [1, 2, 4, 8, 16].map((b) => [String(b), String(b)]), 4), 'bytes');
        const stride = field(form, 'stride', numberInput('stride', 0, 1024, 1), 'elements');
        const offset = field(form, 'offset', numberInput('offset', 0, 4096, 0), 'elements');
        root.appendChild(form);
        root.appendChild(html('p', { class: 'explorer-caption' },
            'Lane l reads the element at offset + l × stride of an array that starts on a '
            + '256-byte boundary. Each row is a 128-byte line of four 32-byte sectors; shaded '
            + 'sectors are moved, the lanes\' bytes are drawn in them.'));
        const message = html('p', { class: 'explorer-message', role: 'status' });
        root.appendChild(message);
        const drawing = html('div', { class: 'explorer-drawing' });
        root.appendChild(drawing);
        const outputs = numbers(root, [
            ['sectors', 'sectors per request'],
            ['lines', 'lines per request'],
            ['requested', 'bytes asked'],
            ['moved', 'bytes moved'],
            ['efficiency', 'efficiency'],
        ]);

        function update() {
            const problems = [];
            const bytes = Number(elem.value);
            const s = whole(stride, 'stride', problems);
            const o = whole(offset, 'offset', problems);
            drawing.replaceChildren();
            message.textContent = problems.join('; ');
            if (problems.length > 0) {
                show(outputs, null);
                return;
            }
            const addresses = stridedAddresses(bytes, s, o);
            const fp = footprint(addresses, bytes);
            show(outputs, {
                sectors: [String(fp.sectors.size), ''],
                lines: [String(fp.lines.length), ''],
                requested: [String(fp.requested), ' (32 lanes × ' + bytes + ' B)'],
                moved: [String(fp.moved), ' (' + fp.sectors.size + ' sectors × 32 B)'],
                efficiency: [(100 * fp.efficiency).toFixed(1) + '%', ' (bytes asked / bytes moved)'],
            });
            drawing.appendChild(drawSectors(addresses, bytes, fp));
        }
        form.addEventListener('input', update);
        form.addEventListener('change', update);
        form.addEventListener('submit', (e) => e.preventDefault());
        update();
    }

    // ---- Explorer (b): shared-memory banks ----

    const PASS_LABEL_W = 52; // left column: the pass each row of words is served in
    const BANK_W = 20;
    const CELL_H = 18;

    function drawBanks(words, banks) {
        const width = PASS_LABEL_W + BANKS * BANK_W + 4;
        const top = 18;
        const height = top + banks.degree * CELL_H + 4;
        const figure = svg('svg', {
            viewBox: '0 0 ' + width + ' ' + height,
            width: width,
            height: height,
            role: 'img',
            'aria-label': 'the warp\'s 32 lanes in the banks of the words they read, '
                + banks.degree + (banks.degree === 1 ? ' pass' : ' passes'),
        });
        figure.appendChild(svg('text', { x: PASS_LABEL_W - 6, y: 12, 'text-anchor': 'end' }, 'bank'));
        for (let b = 0; b < BANKS; b++) {
            const busiest = banks.degree > 1 && banks.passes[b].length === banks.degree;
            figure.appendChild(svg('text', {
                x: PASS_LABEL_W + b * BANK_W + BANK_W / 2, y: 12, 'text-anchor': 'middle',
                class: busiest ? 'explorer-busiest' : 'explorer-muted', 'data-bank-column': b,
            }, String(b)));
        }
        for (let p = 0; p < banks.degree; p++) {
            figure.appendChild(svg('text', {
                x: PASS_LABEL_W - 6, y: top + p * CELL_H + 13, 'text-anchor': 'end',
                class: 'explorer-muted',
            }, 'pass ' + (p + 1)));
        }
        words.forEach((word, lane) => {
            const bank = word % BANKS;
            const pass = banks.passes[bank].indexOf(word);
            const x = PASS_LABEL_W + bank * BANK_W;
            const y = top + pass * CELL_H;
            const cell = svg('g', { class: 'explorer-cell', 'data-lane': lane });
            const r = svg('rect', {
                x: x + 0.5, y: y + 0.5, width: BANK_W - 1, height: CELL_H - 1,
                class: 'explorer-lane',
            });
            cell.appendChild(r);
            cell.appendChild(svg('title', {}, 'lane ' + lane + ': word ' + word + ', bank ' + bank));
            cell.appendChild(svg('text', {
                x: x + BANK_W / 2, y: y + 13, 'text-anchor': 'middle', class: 'explorer-on-lane',
            }, String(lane)));
            figure.appendChild(cell);
        });
        return figure;
    }

    function banksExplorer(root) {
        const form = html('form', { class: 'explorer-form' });
        const rowWords = field(form, 'tile width', numberInput('row_words', 1, 64, 32), 'words');
        const access = field(form, 'access', choice('access', [
            ['column', 'column read: lane l reads tile[l][c]'],
            ['row', 'row read: lane l reads tile[r][l]'],
        ], 'column'));
        const index = field(form, 'c or r', numberInput('index', 0, 63, 0));
        const indexLabel = index.parentElement.firstChild;
        root.appendChild(form);
        root.appendChild(html('p', { class: 'explorer-caption' },
            'A tile of 4-byte words stored row after row; word w is in bank w mod 32. The '
            + 'drawing has one column per bank; a bank serves one word per pass, so the words '
            + 'of one bank stack into passes.'));
        const message = html('p', { class: 'explorer-message', role: 'status' });
        root.appendChild(message);
        const drawing = html('div', { class: 'explorer-drawing' });
        root.appendChild(drawing);
        const outputs = numbers(root, [
            ['degree', 'conflict degree'],
            ['banks', 'banks used'],
        ]);

        function update() {
            const problems = [];
            const column = access.value === 'column';
            indexLabel.textContent = column ? 'column c ' : 'row r ';
            const w = whole(rowWords, 'tile width', problems);
            const i = whole(index, column ? 'column' : 'row', problems);
            if (column && w !== null && i !== null && i >= w) {
                problems.push('column: below the tile width (0 to ' + (w - 1) + ')');
            }
            drawing.replaceChildren();
            message.textContent = problems.join('; ');
            if (problems.length > 0) {
                show(outputs, null);
                return;
            }
            const words = tileWords(w, access.value, i);
            const banks = bankPasses(words);
            const used = banks.passes.filter((p) => p.length > 0).length;
            show(outputs, {
                degree: [String(banks.degree), banks.degree === 1
                    ? ' (conflict-free: one pass)'
                    : ' (' + banks.degree + ' passes)'],
                banks: [String(used), ' of 32'],
            });
            drawing.appendChild(drawBanks(words, banks));
        }
        form.addEventListener('input', update);
        form.addEventListener('change', update);
        form.addEventListener('submit', (e) => e.preventDefault());
        update();
    }

    const explorers = { sectors: sectorsExplorer, banks: banksExplorer };
    for (const root of document.querySelectorAll('.explorer[data-explorer]')) {
        const make = explorers[root.dataset.explorer];
        if (make) {
            root.replaceChildren();
            make(root);
        } else {
            root.textContent = 'unknown explorer: ' + root.dataset.explorer;
        }
    }
})();
