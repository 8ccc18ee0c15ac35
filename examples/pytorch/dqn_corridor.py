"""Deep Q-learning on a small corridor world.

In the style of the "Reinforcement Learning (DQN)" tutorial: a replay memory of
namedtuple transitions in a deque, an epsilon-greedy policy that decays over time,
a policy network and a target network, the Huber loss (SmoothL1Loss) of the
temporal-difference error, gradient clipping by value, AdamW with amsgrad and a soft
update of the target network through its state_dict.  Instead of a Gym environment
the agent walks a corridor: reaching the right end pays 1, each step costs 0.01.
"""
import math
import random
from collections import deque, namedtuple

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim

random.seed(0)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Corridor:
    """States 0..length-1 as one-hot vectors; action 0 goes left, 1 goes right."""

    def __init__(self, length=6):
        self.length = length

    def observe(self):
        return [1.0 if i == self.position else 0.0 for i in range(self.length)]

    def reset(self):
        self.position = 0
        return self.observe()

    def step(self, action):
        self.position = max(0, self.position + (1 if action == 1 else -1))
        terminated = self.position == self.length - 1
        reward = 1.0 if terminated else -0.01
        return self.observe(), reward, terminated


Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        """Save a transition"""
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 32)
        self.layer2 = nn.Linear(32, 32)
        self.layer3 = nn.Linear(32, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


BATCH_SIZE = 32
GAMMA = 0.9
EPS_START = 0.9
EPS_END = 0.05
EPS_DECAY = 200
TAU = 0.05
LR = 1e-3

env = Corridor()
n_actions = 2
state = env.reset()
n_observations = len(state)
policy_net = DQN(n_observations, n_actions).to(device)
target_net = DQN(n_observations, n_actions).to(device)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(1000)
steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            # t.max(1) will return the largest column value of each row.
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor([[random.randrange(n_actions)]], device=device, dtype=torch.long)


losses = []


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return
    transitions = memory.sample(BATCH_SIZE)
    # Transpose the batch: a batch-array of Transitions to a Transition of batch-arrays.
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                  device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    # In-place gradient clipping
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    losses.append(loss.item())


episode_durations = []
for i_episode in range(60):
    state = env.reset()
    state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
    for t in range(30):
        action = select_action(state)
        observation, reward, terminated = env.step(action.item())
        reward = torch.tensor([reward], device=device)
        next_state = None if terminated else torch.tensor(
            observation, dtype=torch.float32, device=device).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state
        optimize_model()
        # Soft update of the target network's weights: θ′ ← τ θ + (1 −τ )θ′
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = (policy_net_state_dict[key] * TAU
                                          + target_net_state_dict[key] * (1 - TAU))
        target_net.load_state_dict(target_net_state_dict)
        if terminated:
            break
    episode_durations.append(t + 1)
    if i_episode % 10 == 9 and losses:
        print("episode %d duration %d loss %.6f" % (i_episode + 1, t + 1, losses[-1]))

print("durations:", episode_durations[-10:])
state = torch.tensor(env.reset()).unsqueeze(0)
with torch.no_grad():
    for t in range(20):
        state, reward, terminated = env.step(policy_net(state).argmax().item())
        state = torch.tensor(state).unsqueeze(0)
        if terminated:
            break
print("greedy steps to the goal:", t + 1 if terminated else None)
print("final loss:", sum(losses[-20:]) / 20)
