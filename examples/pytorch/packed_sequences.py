"""Variable-length sequences: a Dataset, a collate_fn that pads, and packed LSTM input.

In the style of course notebooks on RNNs over batches of unequal length: a custom
Dataset returns sequences of different lengths, the DataLoader's collate_fn pads
them with pad_sequence and keeps their lengths, pack_padded_sequence
(enforce_sorted=False) lets the LSTM skip the padding, and pad_packed_sequence
unpacks its output.  The task: is the mean of a sequence's digits above 5?
Extra padding must not change a prediction.
"""
import difflab as torch
import difflab.nn as nn
from difflab.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from difflab.utils.data import DataLoader, Dataset

torch.manual_seed(0)
PAD = 0


class DigitSequences(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(n)
        lengths = torch.randint(2, 10, (n,), generator=g)
        self.sequences = [torch.randint(1, 10, (int(k),), generator=g) for k in lengths]

    def __len__(self):
        return len(self.sequences)

    def __getitem__(self, idx):
        seq = self.sequences[idx]
        return seq, int(seq.float().mean() > 5.0)


def collate_fn(batch):
    sequences, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in sequences])
    padded = pad_sequence(sequences, batch_first=True, padding_value=PAD)
    return padded, lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self, vocab=10, embed=8, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed, padding_idx=PAD)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, padded, lengths):
        embedded = self.embedding(padded)
        packed = pack_padded_sequence(embedded, lengths, batch_first=True,
                                      enforce_sorted=False)
        packed_out, (h_n, c_n) = self.lstm(packed)
        output, output_lengths = pad_packed_sequence(packed_out, batch_first=True)
        assert torch.equal(output_lengths, lengths)
        return self.head(h_n[-1]), output


train_loader = DataLoader(DigitSequences(512), batch_size=32, shuffle=True,
                          collate_fn=collate_fn)
test_loader = DataLoader(DigitSequences(200), batch_size=50, collate_fn=collate_fn)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
criterion = nn.CrossEntropyLoss()
for epoch in range(12):
    total = 0.0
    for padded, lengths, labels in train_loader:
        logits, _ = model(padded, lengths)
        loss = criterion(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch % 3 == 0:
        print("epoch", epoch, "loss %.4f" % (total / len(train_loader)))

model.eval()
correct = 0
with torch.no_grad():
    for padded, lengths, labels in test_loader:
        logits, output = model(padded, lengths)
        correct += (logits.argmax(1) == labels).sum().item()
    # padding beyond the longest sequence changes nothing
    wider = torch.cat([padded, torch.zeros(padded.size(0), 3, dtype=padded.dtype)], 1)
    same = torch.allclose(model(wider, lengths)[0], logits)
    # the unpacked output is zero past each sequence's end
    beyond = output[0, lengths[0]:].abs().sum().item() if lengths[0] < output.size(1) else 0.0
print("padded batch:", tuple(padded.shape), "unpacked output:", tuple(output.shape))
print("extra padding changes nothing:", same)
print("output past the end:", beyond)
print("test accuracy:", correct / 200)
print("final loss:", total / len(train_loader))
