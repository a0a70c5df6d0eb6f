//! Cutting a body into pieces, as a network would.

/// The input's first byte chooses the cut, the rest is the body.
pub fn split(input: &[u8]) -> (u8, &[u8]) {
    match input.split_first() {
        Some((&seed, body)) => (seed, body),
        None => (0, &[]),
    }
}

/// `body` in pieces of 1 to 64 bytes, their lengths drawn from `seed`.
pub fn pieces(body: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x9E37_0000;
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        // xorshift32: a cheap, fixed sequence of lengths for each seed.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state % 64 + 1) as usize;
        let (piece, tail) = rest.split_at(len.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    pieces
}
