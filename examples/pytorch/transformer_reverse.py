"""An encoder-decoder Transformer that learns to reverse sequences of digits.

The encoder reads the source; the decoder writes the reversed sequence one token
at a time, seeing the tokens before (teacher forcing in training, its own
outputs when decoding greedily) through a causal mask.
"""
import difflab as torch
import difflab.nn as nn

torch.manual_seed(0)
VOCAB, LENGTH, D_MODEL, START = 8, 6, 32, 8  # START: the token that begins every output


class Reverser(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, D_MODEL)
        self.tgt_embed = nn.Embedding(VOCAB + 1, D_MODEL)
        self.position = nn.Parameter(torch.randn(LENGTH, D_MODEL) * 0.1)
        self.transformer = nn.Transformer(D_MODEL, nhead=4, num_encoder_layers=2,
                                          num_decoder_layers=2, dim_feedforward=64,
                                          dropout=0.0, batch_first=True)
        self.out = nn.Linear(D_MODEL, VOCAB)

    def forward(self, src, tgt_in):
        length = tgt_in.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        h = self.transformer(self.src_embed(src) + self.position,
                             self.tgt_embed(tgt_in) + self.position[:length], tgt_mask=mask)
        return self.out(h)


def batch(n):
    src = torch.randint(0, VOCAB, (n, LENGTH))
    tgt = src.flip(1)
    start = torch.full((n, 1), START, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], 1), tgt


model = Reverser()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.CrossEntropyLoss()
for step in range(250):
    src, tgt_in, tgt = batch(32)
    loss = loss_fn(model(src, tgt_in).reshape(-1, VOCAB), tgt.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step, loss.item())

# greedy decoding: each output token is fed back in as the next input
model.eval()
src, _, tgt = batch(100)
with torch.no_grad():
    out = torch.full((100, 1), START, dtype=torch.long)
    for _ in range(LENGTH):
        next_token = model(src, out)[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, next_token], 1)
accuracy = (out[:, 1:] == tgt).float().mean().item()
print("example:", src[0].tolist(), "->", out[0, 1:].tolist())
print("sequence accuracy:", accuracy)
print("final loss:", loss.item())
