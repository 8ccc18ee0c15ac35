"""Classifying names by their language with a character-level RNN.

In the style of the "NLP from scratch" tutorial: each name is a sequence of one-hot
letters, an nn.RNN reads it one letter at a time from a zero hidden state, and a
linear layer with LogSoftmax turns the last hidden state into a language.  The
names are generated (three made-up spelling styles) so that the program needs no
download.
"""
import random
import string

import difflab as torch
import difflab.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)

rng = random.Random(0)
STYLES = {"Italian": ("lmnrt", "aeio", "o"), "Polish": ("szcwk", "yie", "ski"),
          "Japanese": ("kmtnh", "aiu", "a")}


def make_name(style):
    consonants, vowels, ending = STYLES[style]
    name = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(1, 3)))
    return (name + ending).capitalize()


category_lines = {c: [make_name(c) for _ in range(200)] for c in STYLES}
all_categories = list(category_lines)
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor, hidden):
        rnn_out, hidden = self.rnn(line_tensor, hidden)
        output = self.h2o(hidden[0])
        return self.softmax(output), hidden

    def initHidden(self):
        return torch.zeros(1, 1, self.hidden_size)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


def randomTrainingExample():
    category = rng.choice(all_categories)
    line = rng.choice(category_lines[category])
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    return category, line, category_tensor, lineToTensor(line)


torch.manual_seed(0)
n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
criterion = nn.NLLLoss()
learning_rate = 0.01


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    output, hidden = rnn(line_tensor, hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    # Add parameters' gradients to their values, multiplied by learning rate
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


current_loss = 0
all_losses = []
for iter in range(1, 1201):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if iter % 200 == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = "✓" if guess == category else "✗ (%s)" % category
        print("%d %.4f %s / %s %s" % (iter, current_loss / 200, line, guess, correct))
        all_losses.append(current_loss / 200)
        current_loss = 0

confusion = torch.zeros(n_categories, n_categories)
with torch.no_grad():
    for category in all_categories:
        for line in category_lines[category][:50]:
            output, _ = rnn(lineToTensor(line), rnn.initHidden())
            guess, guess_i = categoryFromOutput(output)
            confusion[all_categories.index(category)][guess_i] += 1
confusion = confusion / confusion.sum(1, keepdim=True)
print("confusion diagonal:", [round(v, 2) for v in confusion.diag().tolist()])
print("accuracy:", confusion.diag().mean().item())


def predict(input_line, n_predictions=2):
    with torch.no_grad():
        output, _ = rnn(lineToTensor(input_line), rnn.initHidden())
        topv, topi = output.topk(n_predictions, 1, True)
        return [(round(topv[0][i].item(), 2), all_categories[topi[0][i].item()])
                for i in range(n_predictions)]


print("Dovesky:", predict("Dovesky"))
print("final loss:", all_losses[-1])
