"""A character-level MLP language model: read three characters, predict the next.

Each character is looked up in an embedding table C (27 characters × 10 numbers),
the three embeddings go through a tanh layer, and a linear layer gives the logits
of the next character; cross entropy is the loss.  Trained on a list of made-up
names, it then samples new names one character at a time with ``multinomial``,
from a seeded ``Generator``: the same seed gives the same names on every run.
"""
import random

import difflab as torch
import difflab.nn.functional as F

# A names list, made up from syllables (the program needs no download).
rng = random.Random(0)
starts = ["ma", "li", "an", "jo", "el", "sa", "ka", "ro", "da", "mi", "no", "be", "ta", "ha"]
middles = ["ri", "le", "na", "ya", "so", "vi", "ne", "la", "do", "ti", "ra"]
ends = ["a", "n", "ah", "el", "on", "ie", "y", "o", "is", "en"]
words = sorted({rng.choice(starts) + "".join(rng.choice(middles) for _ in range(rng.randint(0, 2)))
                + rng.choice(ends) for _ in range(600)})

chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)

block_size = 3  # how many characters it reads to predict the next one


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


random.Random(42).shuffle(words)
n1 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:])
print(Xtr.shape, Ytr.shape, Xdev.shape)

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, 10), generator=g)
W1 = torch.randn((block_size * 10, 200), generator=g) * 0.2
b1 = torch.randn(200, generator=g) * 0.01
W2 = torch.randn((200, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
parameters = [C, W1, b1, W2, b2]
print("parameters:", sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

for i in range(3000):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)  # a minibatch
    emb = C[Xtr[ix]]  # (32, 3, 10)
    h = torch.tanh(emb.view(-1, block_size * 10) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 2000 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    if i % 500 == 0:
        print(f"{i:5d}: {loss.item():.4f}")


@torch.no_grad()
def split_loss(X, Y):
    emb = C[X]
    h = torch.tanh(emb.view(emb.shape[0], -1) @ W1 + b1)
    return F.cross_entropy(h @ W2 + b2, Y).item()


train_loss, dev_loss = split_loss(Xtr, Ytr), split_loss(Xdev, Ydev)
print(f"train {train_loss:.4f}  dev {dev_loss:.4f}")

g = torch.Generator().manual_seed(2147483647 + 10)
samples = []
for _ in range(10):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        probs = F.softmax(h @ W2 + b2, dim=1)
        ix = torch.multinomial(probs, num_samples=1, replacement=True, generator=g).item()
        context = context[1:] + [ix]
        if ix == 0 or len(out) > 30:
            break
        out.append(itos[ix])
    samples.append("".join(out))
print("samples:", " ".join(samples))
print("dtype:", C.dtype)
print("final loss:", dev_loss)
