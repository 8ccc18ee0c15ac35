"""Text classification with nn.EmbeddingBag and offsets.

In the style of the "Text classification with the torchtext library" tutorial:
a vocabulary built from the training texts, a collate_fn that concatenates the token
ids of a batch into one flat tensor with the offsets where each text starts, an
EmbeddingBag (mean of each text's embeddings) and a linear layer; SGD with a
StepLR schedule and gradient-norm clipping, random_split for a validation set.
The "news" is generated: four topics, each with its own words, plus common words.
"""
import random
from collections import Counter

import difflab as torch
from difflab import nn
from difflab.utils.data import DataLoader
from difflab.utils.data.dataset import random_split

torch.manual_seed(0)
rng = random.Random(0)
TOPICS = {1: "match goal team season coach league score player",
          2: "market shares profit bank trade stocks price growth",
          3: "software chip computer internet phone data robot code",
          4: "election minister vote party president law court policy"}
COMMON = "the a of to in and on for with says new".split()


def make_text(label):
    words = TOPICS[label].split()
    return " ".join(rng.choice(words if rng.random() < 0.4 else COMMON)
                    for _ in range(rng.randint(4, 12)))


train_iter = [(label, make_text(label)) for label in rng.choices([1, 2, 3, 4], k=800)]
test_iter = [(label, make_text(label)) for label in rng.choices([1, 2, 3, 4], k=200)]

tokenizer = str.split
counter = Counter(token for _, text in train_iter for token in tokenizer(text))
itos = ["<unk>"] + sorted(counter)
vocab = {token: index for index, token in enumerate(itos)}


def text_pipeline(x):
    return [vocab.get(token, 0) for token in tokenizer(x)]


def label_pipeline(x):
    return int(x) - 1


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(label_pipeline(_label))
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


num_class = len(set([label for (label, text) in train_iter]))
vocab_size = len(vocab)
emsize = 16
model = TextClassificationModel(vocab_size, emsize, num_class)


def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    return loss.item()


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


EPOCHS = 8
LR = 5
BATCH_SIZE = 16
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)
total_accu = None
num_train = int(len(train_iter) * 0.95)
split_train_, split_valid_ = random_split(train_iter, [num_train, len(train_iter) - num_train])
train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True,
                              collate_fn=collate_batch)
valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=True,
                              collate_fn=collate_batch)
test_dataloader = DataLoader(test_iter, batch_size=BATCH_SIZE, shuffle=True,
                             collate_fn=collate_batch)
for epoch in range(1, EPOCHS + 1):
    last_loss = train(train_dataloader)
    accu_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    print("| end of epoch {:3d} | valid accuracy {:8.3f} | lr {}".format(
        epoch, accu_val, scheduler.get_last_lr()[0]))

print("test accuracy: {:8.3f}".format(evaluate(test_dataloader)))
with torch.no_grad():
    text = torch.tensor(text_pipeline("the team won the league with a late goal"))
    print("sports example is topic", model(text, torch.tensor([0])).argmax(1).item() + 1)
print("final loss:", last_loss)
